#pragma once
// One node's page in the report: what it is (mutation, parent, knobs, cost),
// its measurements per shape, its profile and analysis, the LLM exchange that
// made it, its source and its diff against its parent. A <section
// id="node-N">: the graph, the charts and the tables link to it.

#include <string>

namespace kestrel {
struct NodePage;
}

namespace kestrel::report {

// `live`: the page is served by `kestrel serve`, which takes a person's
// note, label, ban and pin (kActScript posts them with the token).
std::string NodePageHtml(const NodePage& page, bool live = false);

}  // namespace kestrel::report
