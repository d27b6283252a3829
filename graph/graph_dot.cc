// SearchGraph::WriteDot: Graphviz text for a search graph, written only
// through SearchGraph's public interface.
//
// Shape of the output (render with `dot -Tsvg`):
//   digraph kestrel {
//     graph [label="title", labelloc=t, rankdir=LR, ...];
//     "12" [label="#12\nBLOCK=4 UNROLL=2\n2.31x", fillcolor="#74c476"];
//     "3" -> "12" [style=dashed];
//   }
// Measured nodes are shaded on a log scale: greens above 1x (darker is
// faster, up to the graph's best), yellows to orange below 1x; failures are
// red, nodes not yet evaluated grey; the best node has a bold border. Edges:
// derive solid, fix dashed, duplicate dotted, any other kind solid and labelled.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>
#include <string>
#include <string_view>

#include "graph/search_graph.h"

namespace kestrel {
namespace {

constexpr std::size_t kMaxLabelChars = 48;     // per display label
constexpr std::size_t kMaxTooltipChars = 200;  // the mutation, shown on hover

struct Rgb {
  int red;
  int green;
  int blue;
};

constexpr Rgb kPaleGreen{0xe5, 0xf5, 0xe0};  // just above 1x
constexpr Rgb kGreen{0x41, 0xab, 0x5d};      // the graph's best
constexpr Rgb kPaleYellow{0xff, 0xf7, 0xbc};  // just below 1x
constexpr Rgb kOrange{0xfd, 0xae, 0x6b};      // the graph's slowest
constexpr std::string_view kFailedColor = "#f4a6a6";
constexpr std::string_view kProposedColor = "#eeeeee";
constexpr std::string_view kBuiltColor = "#d9d9d9";

// The byte length of the UTF-8 sequence at text[i], or 0 when it is invalid.
std::size_t Utf8Length(std::string_view text, std::size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  std::size_t length = 0;
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) length = 2;
  else if (lead >= 0xe0 && lead <= 0xef) length = 3;
  else if (lead >= 0xf0 && lead <= 0xf4) length = 4;
  else return 0;
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return 0;
  }
  return length;
}

// `text` made safe inside a double-quoted DOT string: quotes and backslashes
// escaped, newlines as \n (a centred line break), other control characters
// and invalid UTF-8 as '?'; cut to `max_chars` characters with "...".
std::string Escape(std::string_view text, std::size_t max_chars) {
  std::string out;
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (chars == max_chars) {
      out += "...";
      break;
    }
    ++chars;
    const char c = text[i];
    const std::size_t length = Utf8Length(text, i);
    if (length > 1) {
      out.append(text.substr(i, length));
      i += length;
      continue;
    }
    ++i;
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      --chars;  // dropped: \r\n is one line break
    } else if (length == 0 || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += '?';
    } else {
      out += c;
    }
  }
  return out;
}

std::string Hex(Rgb color) {
  char text[8];
  std::snprintf(text, sizeof text, "#%02x%02x%02x", color.red, color.green, color.blue);
  return text;
}

// The colour a fraction `t` of the way from `from` to `to`.
std::string Mix(Rgb from, Rgb to, double t) {
  if (!std::isfinite(t)) t = 1.0;
  t = std::clamp(t, 0.0, 1.0);
  const auto lerp = [t](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * t)); };
  return Hex({lerp(from.red, to.red), lerp(from.green, to.green), lerp(from.blue, to.blue)});
}

// The range of measured speedups, for the shading scale.
struct SpeedupRange {
  double lowest = std::numeric_limits<double>::infinity();
  double highest = -std::numeric_limits<double>::infinity();
};

std::string MeasuredColor(double speedup, const SpeedupRange& range) {
  if (speedup >= 1.0) {
    const double t = range.highest > 1.0 ? std::log(speedup) / std::log(range.highest) : 1.0;
    return Mix(kPaleGreen, kGreen, t);
  }
  if (speedup <= 0.0) return Hex(kOrange);
  const double t = range.lowest < 1.0 ? std::log(speedup) / std::log(range.lowest) : 1.0;
  return Mix(kPaleYellow, kOrange, t);
}

std::string FillColor(const GraphNode& node, const SpeedupRange& range) {
  switch (node.status) {
    case NodeStatus::kProposed: return std::string(kProposedColor);
    case NodeStatus::kBuilt: return std::string(kBuiltColor);
    case NodeStatus::kMeasured:
      return node.speedup ? MeasuredColor(*node.speedup, range) : Hex(kPaleGreen);
    case NodeStatus::kBuildFailed:
    case NodeStatus::kWrong:
    case NodeStatus::kCrashed:
    case NodeStatus::kTimedOut:
    case NodeStatus::kRejected: return std::string(kFailedColor);
  }
  return std::string(kFailedColor);
}

// "#12\nBLOCK=4 UNROLL=2\n2.31x", or the status in place of the speedup.
std::string NodeLabel(const GraphNode& node) {
  std::string label = "#" + std::to_string(node.id) + "\\n";
  if (!node.label.empty()) label += Escape(node.label, kMaxLabelChars) + "\\n";
  if (node.status == NodeStatus::kMeasured && node.speedup) {
    char speedup[32];
    std::snprintf(speedup, sizeof speedup, "%.2fx", *node.speedup);
    label += speedup;
  } else {
    label += ToString(node.status);
  }
  return label;
}

std::string EdgeAttributes(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::kDerive: return "";
    case EdgeKind::kFix: return " [style=dashed]";
    case EdgeKind::kDuplicate: return " [style=dotted]";
    case EdgeKind::kSameCode: return " [style=dotted, label=\"same code\"]";
    case EdgeKind::kHuman: return " [style=bold, label=\"human\"]";
  }
  return "";
}

}  // namespace

void SearchGraph::WriteDot(std::ostream& out, const std::string& title) const {
  const std::vector<NodeId> ids = Nodes();
  SpeedupRange range;
  for (const NodeId id : ids) {
    const GraphNode& node = Node(id);
    if (node.status != NodeStatus::kMeasured || !node.speedup) continue;
    range.lowest = std::min(range.lowest, *node.speedup);
    range.highest = std::max(range.highest, *node.speedup);
  }
  const std::vector<NodeId> best = Best(1);

  out << "digraph kestrel {\n";
  out << "  graph [rankdir=LR, fontname=\"Helvetica\"";
  if (!title.empty()) out << ", label=\"" << Escape(title, kMaxTooltipChars) << "\", labelloc=t";
  out << "];\n";
  out << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n";
  out << "  edge [arrowsize=0.7];\n";
  for (const NodeId id : ids) {
    const GraphNode& node = Node(id);
    out << "  \"" << id << "\" [label=\"" << NodeLabel(node) << "\", fillcolor=\""
        << FillColor(node, range) << "\"";
    if (!node.mutation.empty()) {
      out << ", tooltip=\"" << Escape(node.mutation, kMaxTooltipChars) << "\"";
    }
    if (!best.empty() && best.front() == id) out << ", style=\"rounded,filled,bold\", penwidth=3";
    out << "];\n";
  }
  for (const GraphEdge& edge : Edges()) {
    out << "  \"" << edge.parent << "\" -> \"" << edge.child << "\"" << EdgeAttributes(edge.kind)
        << ";\n";
  }
  out << "}\n";
}

}  // namespace kestrel
