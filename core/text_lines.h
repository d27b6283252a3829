#pragma once
// Text as lines, for the places that read logs and sources line by line.

#include <string_view>
#include <vector>

namespace kestrel {

// The lines of `text` without their '\n' (views into it); a final newline
// makes no empty last line.
std::vector<std::string_view> SplitLines(std::string_view text);

}  // namespace kestrel
