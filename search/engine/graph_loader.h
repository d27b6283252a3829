#pragma once
// Builds a task's SearchGraph from the Store: nodes (without source text)
// and edges, each node's expansions as stored.

#include <vector>

#include "graph/search_graph.h"
#include "store/store.h"

namespace kestrel {

struct LoadedGraph {
  SearchGraph graph;
  std::vector<NodeRecord> nodes;  // as stored, in id order
};

Result<LoadedGraph> LoadSearchGraph(Store& store, std::int64_t graph_id);

// The graph node of a stored node: label from its knobs, speedup only when measured.
GraphNode ToGraphNode(const NodeRecord& record);

}  // namespace kestrel
