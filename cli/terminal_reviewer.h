#pragma once
// The terminal's answer to a Reviewer (search/mutators/reviewer.h), for
// `kestrel run --review`: each proposal is printed, then a person types
// a (accept), e (edit in $EDITOR, default vi) or r (reject, then a reason).

#include <memory>
#include <string>

namespace kestrel {
class Reviewer;
}

namespace kestrel::cli {

// Asks on stdin, prints on stderr; `author` signs the verdicts. Stdin must
// be a terminal (cmd_run.cc refuses --review otherwise).
std::shared_ptr<Reviewer> MakeTerminalReviewer(std::string author);

}  // namespace kestrel::cli
