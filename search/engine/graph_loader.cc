#include "search/engine/graph_loader.h"

namespace kestrel {

GraphNode ToGraphNode(const NodeRecord& record) {
  GraphNode node;
  node.id = record.id;
  node.identity = record.identity;
  node.label = record.knobs.empty() ? record.mutation : ToString(record.knobs);
  node.mutation = record.mutation;
  node.status = record.status;
  node.speedup = record.status == NodeStatus::kMeasured ? record.speedup : std::nullopt;
  node.run_id = record.run_id;
  node.expansions = static_cast<int>(record.expansions);
  return node;
}

Result<LoadedGraph> LoadSearchGraph(Store& store, std::int64_t graph_id) {
  LoadedGraph loaded;
  auto nodes = store.LoadNodes(graph_id);
  if (!nodes) return Fail(nodes.error());
  auto edges = store.LoadEdges(graph_id);
  if (!edges) return Fail(edges.error());
  for (const NodeRecord& record : *nodes) loaded.graph.AddNode(ToGraphNode(record));
  std::vector<GraphEdge> derivations;
  derivations.reserve(edges->size());
  for (const EdgeRecord& edge : *edges) {
    // A self-edge says nothing about where a node came from; databases
    // written before duplicates of the parent itself were kept edge-free
    // (each is a run event now) may hold one.
    if (edge.parent == edge.child) continue;
    derivations.push_back({edge.parent, edge.child, edge.kind});
  }
  loaded.graph.AddDerivations(derivations);
  loaded.nodes = std::move(*nodes);
  return loaded;
}

}  // namespace kestrel
