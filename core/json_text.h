#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace kestrel {

// The JSON text of `value`, whatever bytes its strings hold. A kernel's
// source, a note, a compiler log or a file name may carry bytes that are not
// UTF-8 (a Latin-1 comment); nlohmann's plain dump() throws on them, which
// would abort a `--json` command for good on one stored note. Here they
// become U+FFFD. `indent` as dump()'s: -1 one line, 2 pretty.
std::string JsonText(const nlohmann::json& value, int indent = -1);

}  // namespace kestrel
