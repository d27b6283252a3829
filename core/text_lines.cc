#include "core/text_lines.h"

namespace kestrel {

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::string HeadAndTail(std::string text, std::size_t limit) {
  if (text.size() > limit) text = text.substr(0, limit / 2) + "\n[...]\n" + text.substr(text.size() - limit / 2);
  return text;
}

}  // namespace kestrel
