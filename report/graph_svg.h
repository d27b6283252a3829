#pragma once
// The search graph as inline SVG, laid out by Graphviz (`dot -Tsvg`): each
// node a <g id="g_node_N"> coloured by its outcome (the fill's strength by its
// speedup against the graph's best) that opens its page (#node-N) when
// clicked. Only numbers and outcome words go into the DOT text: no text from
// the database reaches Graphviz.

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

namespace kestrel {
struct ReportModel;
}

namespace kestrel::report {

// The DOT text of the model's graph; only the `shown` nodes (and the edges
// between them) when it is given.
std::string GraphDot(const ReportModel& model, const std::set<std::int64_t>* shown = nullptr);
// What a graph over `max_nodes` nodes is drawn as: the best nodes and how
// they were reached. The lineage of each top candidate (seed first), then
// the other measured nodes by speedup, each with its lineage, while the
// whole lineage fits; at most max_nodes ids.
std::set<std::int64_t> NodesToDraw(const ReportModel& model, std::size_t max_nodes);
// The <svg> element (a larger graph: NodesToDraw's part of it, saying so),
// or a paragraph saying why there is none (Graphviz missing or failing).
std::string GraphSvg(const ReportModel& model, std::size_t max_nodes = 1500);
// Graphviz's `dot -Tsvg` on DOT text: the <svg> element (without the XML
// prolog, so that it can be inlined; it is a whole SVG file as it is), or ""
// when dot is missing or fails. No shell sees a name the caller chose.
std::string DotToSvg(const std::string& dot);

}  // namespace kestrel::report
