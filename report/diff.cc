#include "report/diff.h"

#include <algorithm>
#include <cstdint>

#include "core/text_lines.h"
#include "report/html.h"

namespace kestrel::report {

LineDiff DiffLines(std::string_view before, std::string_view after, std::size_t max_cells) {
  const auto a = SplitLines(before);
  const auto b = SplitLines(after);
  LineDiff diff;
  const std::size_t n = a.size(), m = b.size();
  if ((n + 1) * (m + 1) > max_cells) {
    diff.too_large = true;
    return diff;
  }
  // common[i][j]: the longest common subsequence of a[i..] and b[j..].
  std::vector<std::uint32_t> common((n + 1) * (m + 1), 0);
  const auto at = [&](std::size_t i, std::size_t j) -> std::uint32_t& { return common[i * (m + 1) + j]; };
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m; j-- > 0;) {
      at(i, j) = a[i] == b[j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    }
  }
  std::size_t i = 0, j = 0;
  using enum DiffLine::Kind;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      diff.lines.push_back({kSame, std::string(a[i])});
      ++i, ++j;
    } else if (j < m && (i == n || at(i, j + 1) > at(i + 1, j))) {
      diff.lines.push_back({kAdded, std::string(b[j++])});
    } else {
      diff.lines.push_back({kRemoved, std::string(a[i++])});
    }
  }
  return diff;
}

std::string DiffHtml(const LineDiff& diff, int context) {
  if (diff.too_large) return "<p class=\"muted\">The sources are too long to compare here.</p>";
  // Keep unchanged lines within `context` of a change.
  const std::size_t count = diff.lines.size();
  std::vector<bool> keep(count, false);
  for (std::size_t k = 0; k < count; ++k) {
    if (diff.lines[k].kind == DiffLine::Kind::kSame) continue;
    const std::size_t from = k >= static_cast<std::size_t>(context) ? k - context : 0;
    for (std::size_t near = from; near < count && near <= k + context; ++near) keep[near] = true;
  }
  std::string html = "<pre class=\"diff\">";
  bool folded = false;
  bool changed = false;
  for (std::size_t k = 0; k < count; ++k) {
    const DiffLine& line = diff.lines[k];
    if (!keep[k]) {
      if (!folded) html += "<span class=\"fold\">…</span>\n";
      folded = true;
      continue;
    }
    folded = false;
    switch (line.kind) {
      case DiffLine::Kind::kSame: html += "  " + Escape(line.text) + "\n"; break;
      case DiffLine::Kind::kAdded: html += "<ins>+ " + Escape(line.text) + "</ins>\n"; changed = true; break;
      case DiffLine::Kind::kRemoved: html += "<del>- " + Escape(line.text) + "</del>\n"; changed = true; break;
    }
  }
  if (!changed) return "<p class=\"muted\">The same source as its parent (only knobs or flags differ).</p>";
  return html + "</pre>";
}

}  // namespace kestrel::report
