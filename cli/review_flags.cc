#include "cli/review_flags.h"

#include <unistd.h>

#include "cli/human_flags.h"
#include "cli/terminal_reviewer.h"
#include "search/mutators/reviewer.h"
#include "search/review_desk.h"

namespace kestrel::cli {

void AddReviewFlags(CLI::App& command, ReviewFlags& flags) {
  command.add_flag("--review", flags.terminal,
                   "step mode: each LLM proposal and plan waits for a person, on this terminal (accept, edit in "
                   "$EDITOR, reject) and on the live page (kestrel serve --token T), whichever answers first");
  command.add_flag("--review-page", flags.page,
                   "step mode answered on the live page only (kestrel serve --token T): for a run without a terminal");
  AddAuthorFlag(command, flags.author);
}

Result<std::shared_ptr<Reviewer>> MakeReviewer(const ReviewFlags& flags) {
  if (!flags.any()) return std::shared_ptr<Reviewer>();
  if (flags.terminal && ::isatty(STDIN_FILENO) == 0) {
    return Fail(Error::InvalidArgument(
        "--review asks you about each LLM proposal on the terminal, but stdin is not a terminal; run it in a "
        "terminal, use --review-page to answer on the live page (kestrel serve --token T), or run without "
        "--review"));
  }
  return MakeReviewDesk(flags.terminal ? MakeTerminalReviewer(Author(flags.author)) : nullptr);
}

}  // namespace kestrel::cli
