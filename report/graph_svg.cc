#include "report/graph_svg.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "report/html.h"
#include "report/report_model.h"
#include "report/svg_charts.h"

namespace kestrel::report {
namespace {

const char* EdgeStyle(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::kDerive: return "color=\"#455a64\"";
    case EdgeKind::kFix: return "color=\"#c62828\", style=dashed";
    case EdgeKind::kSameCode: return "color=\"#1565c0\", style=dotted, constraint=false";
    default: return "color=\"#9e9e9e\", style=dotted, constraint=false";
  }
}

}  // namespace

std::set<std::int64_t> NodesToDraw(const ReportModel& model, std::size_t max_nodes) {
  std::map<std::int64_t, std::int64_t> parent;  // along the edges lineage follows
  for (const EdgeRecord& edge : model.edges) {
    if (edge.kind == EdgeKind::kDerive || edge.kind == EdgeKind::kFix || edge.kind == EdgeKind::kHuman) {
      parent.emplace(edge.child, edge.parent);
    }
  }
  std::set<std::int64_t> shown;
  // Adds `node` with the ancestors not shown yet, when they all fit.
  const auto add_lineage = [&](std::int64_t node) {
    std::vector<std::int64_t> missing;
    for (std::int64_t at = node; !shown.count(at);) {
      missing.push_back(at);
      const auto up = parent.find(at);
      if (up == parent.end() || std::find(missing.begin(), missing.end(), up->second) != missing.end()) break;
      at = up->second;
    }
    if (shown.size() + missing.size() > max_nodes) return;
    shown.insert(missing.begin(), missing.end());
  };
  for (const BestRow& row : model.top) add_lineage(row.node_id);
  std::vector<const NodeRecord*> measured;
  for (const NodeRecord& node : model.nodes) {
    if (node.status == NodeStatus::kMeasured && node.speedup) measured.push_back(&node);
  }
  std::stable_sort(measured.begin(), measured.end(),
                   [](const NodeRecord* a, const NodeRecord* b) { return *a->speedup > *b->speedup; });
  for (const NodeRecord* node : measured) {
    if (shown.size() >= max_nodes) break;
    add_lineage(node->id);
  }
  return shown;
}

std::string GraphDot(const ReportModel& model, const std::set<std::int64_t>* shown) {
  const auto drawn = [shown](std::int64_t id) { return shown == nullptr || shown->count(id) > 0; };
  double best = 0;
  for (const NodeRecord& node : model.nodes) best = std::max(best, node.speedup.value_or(0));
  std::string dot = "digraph search {\n  rankdir=TB; bgcolor=\"transparent\";\n"
                    "  node [shape=box, style=\"rounded,filled\", fontname=\"sans-serif\", fontsize=10];\n"
                    "  edge [arrowsize=0.6];\n";
  for (const NodeRecord& node : model.nodes) {
    if (!drawn(node.id)) continue;
    const std::string status(ToString(node.status));
    std::string label = "#" + std::to_string(node.id);
    std::string fill = "#eeeeee";
    if (node.status == NodeStatus::kMeasured && node.speedup) {
      label += fmt::format("\\n{:.2f}x", *node.speedup);
      // Green, stronger the closer to the best.
      const double share = best > 0 ? std::clamp(*node.speedup / best, 0.0, 1.0) : 0.0;
      const auto mix = [share](int from, int to) { return static_cast<int>(from + (to - from) * share); };
      fill = fmt::format("#{:02x}{:02x}{:02x}", mix(232, 67), mix(245, 160), mix(233, 71));
    } else {
      label += "\\n" + status;
    }
    dot += fmt::format("  n{0} [id=\"g_node_{0}\", label=\"{1}\", color=\"{2}\", fillcolor=\"{3}\", penwidth=2, "
                       "href=\"#{4}\", tooltip=\"#{0} {5}\"];\n",
                       node.id, label, OutcomeColour(status), fill, NodeAnchor(node.id), status);
  }
  for (const EdgeRecord& edge : model.edges) {
    if (!drawn(edge.parent) || !drawn(edge.child)) continue;
    dot += fmt::format("  n{} -> n{} [{}];\n", edge.parent, edge.child, EdgeStyle(edge.kind));
  }
  return dot + "}\n";
}

std::string DotToSvg(const std::string& dot) {
  char path[] = "/tmp/kestrel-report-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return "";
  close(fd);
  std::string svg;
  {
    std::ofstream(path) << dot;
    const std::string command = std::string("dot -Tsvg '") + path + "' 2>/dev/null";
    if (FILE* pipe = popen(command.c_str(), "r")) {
      char buffer[65536];
      for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) svg.append(buffer, n);
      if (pclose(pipe) != 0) svg.clear();
    }
  }
  std::filesystem::remove(path);
  // Inline: the <svg> element only, without the XML prolog and doctype.
  const std::size_t start = svg.find("<svg");
  return start == std::string::npos ? "" : svg.substr(start);
}

std::string GraphSvg(const ReportModel& model, std::size_t max_nodes) {
  std::string note;
  std::set<std::int64_t> part;
  if (model.nodes.size() > max_nodes) {
    part = NodesToDraw(model, max_nodes);
    note = fmt::format("<p class=\"muted graph-part\">The graph has {} nodes; drawn here: {} of them, the best and "
                       "the lineages that reached them. <code>kestrel graph --format svg</code> draws all of it.</p>",
                       model.nodes.size(), part.size());
  }
  const std::string svg = DotToSvg(GraphDot(model, note.empty() ? nullptr : &part));
  if (svg.empty()) {
    return "<p class=\"muted\">Graphviz's <code>dot</code> is missing or failed (apt-get install graphviz): "
           "no picture of the graph.</p>";
  }
  return note + "<div class=\"graph\">" + svg + "</div>";
}

}  // namespace kestrel::report
