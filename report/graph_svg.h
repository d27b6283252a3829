#pragma once
// The search graph as inline SVG, laid out by Graphviz (`dot -Tsvg`): each
// node a <g id="g_node_N"> coloured by its outcome (the fill's strength by its
// speedup against the graph's best) that opens its page (#node-N) when
// clicked. Only numbers and outcome words go into the DOT text: no text from
// the database reaches Graphviz.

#include <string>

namespace kestrel {
struct ReportModel;
}

namespace kestrel::report {

// The DOT text of the model's graph.
std::string GraphDot(const ReportModel& model);
// The <svg> element, or a paragraph saying why there is none (Graphviz
// missing or failing, a graph over `max_nodes` nodes).
std::string GraphSvg(const ReportModel& model, std::size_t max_nodes = 1500);

}  // namespace kestrel::report
