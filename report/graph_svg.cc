#include "report/graph_svg.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

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

// Runs `dot -Tsvg` on the text; "" when it cannot.
std::string RunDot(const std::string& dot) {
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

}  // namespace

std::string GraphDot(const ReportModel& model) {
  double best = 0;
  for (const NodeRecord& node : model.nodes) best = std::max(best, node.speedup.value_or(0));
  std::string dot = "digraph search {\n  rankdir=TB; bgcolor=\"transparent\";\n"
                    "  node [shape=box, style=\"rounded,filled\", fontname=\"sans-serif\", fontsize=10];\n"
                    "  edge [arrowsize=0.6];\n";
  for (const NodeRecord& node : model.nodes) {
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
    dot += fmt::format("  n{} -> n{} [{}];\n", edge.parent, edge.child, EdgeStyle(edge.kind));
  }
  return dot + "}\n";
}

std::string GraphSvg(const ReportModel& model, std::size_t max_nodes) {
  if (model.nodes.size() > max_nodes) {
    return fmt::format("<p class=\"muted\">The graph has {} nodes, too many to draw here; every node has its page "
                       "below, and <code>kestrel graph --format svg</code> draws all of it.</p>",
                       model.nodes.size());
  }
  const std::string svg = RunDot(GraphDot(model));
  if (svg.empty()) {
    return "<p class=\"muted\">Graphviz's <code>dot</code> is missing or failed (apt-get install graphviz): "
           "no picture of the graph.</p>";
  }
  return "<div class=\"graph\">" + svg + "</div>";
}

}  // namespace kestrel::report
