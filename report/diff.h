#pragma once
// A line diff of a node's source against its parent's (the longest common
// subsequence of lines), as the node page shows it.

#include <string>
#include <string_view>
#include <vector>

namespace kestrel::report {

struct DiffLine {
  enum class Kind { kSame, kAdded, kRemoved };
  Kind kind = Kind::kSame;
  std::string text;
};

// Every line of both texts, in order. Texts whose line counts multiply past
// `max_cells` are not compared: nullopt-like empty result with `too_large`.
struct LineDiff {
  std::vector<DiffLine> lines;
  bool too_large = false;
};
LineDiff DiffLines(std::string_view before, std::string_view after, std::size_t max_cells = 4'000'000);

// The diff as HTML: a <pre> of lines marked +/-, unchanged runs longer than
// 2 * context lines folded to "...". Text is escaped.
std::string DiffHtml(const LineDiff& diff, int context = 3);

}  // namespace kestrel::report
