#pragma once
// Text as lines, for the places that read logs and sources line by line.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kestrel {

// The lines of `text` without their '\n' (views into it); a final newline
// makes no empty last line.
std::vector<std::string_view> SplitLines(std::string_view text);

// `text` in at most about `limit` bytes: its head and its tail, the middle
// replaced by "\n[...]\n" (a log that may be huge, kept where it says most).
std::string HeadAndTail(std::string text, std::size_t limit);

}  // namespace kestrel
