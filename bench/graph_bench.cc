// Benchmarks of SearchGraph at the sizes of a long run (100k nodes).
//   BM_LoadGraph/N    build a graph from N nodes and ~N edges, as loading
//                     from the Store does
//   BM_BestK/N/K      Best(K) on N nodes, about half of them measured
//   BM_SetResult/N    one result update (status and speedup) on N nodes
//   BM_Lineage/D      Lineage of a node at depth D in a 100k-node graph

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "graph/search_graph.h"

namespace kestrel {
namespace {

// A graph as the Store hands it over: nodes, then edges, in insertion order.
struct Snapshot {
  std::vector<GraphNode> nodes;
  std::vector<GraphEdge> edges;
};

// A 64-hex-digit identity, like a SHA-256 of the source.
std::string Identity(std::uint64_t seed) {
  std::string text;
  std::mt19937_64 random(seed);
  for (int i = 0; i < 4; ++i) {
    char part[17];
    std::snprintf(part, sizeof part, "%016llx", static_cast<unsigned long long>(random()));
    text += part;
  }
  return text;
}

GraphNode MakeNode(NodeId id, std::mt19937_64& random) {
  GraphNode node;
  node.id = id;
  node.identity = Identity(static_cast<std::uint64_t>(id));
  node.label = "BLOCK=" + std::to_string(1 << (random() % 8)) +
               " UNROLL=" + std::to_string(1 << (random() % 4));
  node.mutation = "knob move";
  node.run_id = 1;
  if (random() % 2 == 0) {
    node.status = NodeStatus::kMeasured;
    node.speedup = static_cast<double>(random() % 100000) / 10000.0;
  } else {
    node.status = random() % 2 == 0 ? NodeStatus::kWrong : NodeStatus::kBuildFailed;
  }
  return node;
}

// `count` nodes; each node after the first derives from `parent_of(id)`, and
// one in twenty has a second parent, so edges number about 1.05 * count.
template <typename ParentOf>
Snapshot MakeSnapshot(std::int64_t count, ParentOf parent_of) {
  std::mt19937_64 random(42);
  Snapshot snapshot;
  snapshot.nodes.reserve(static_cast<std::size_t>(count));
  for (NodeId id = 0; id < count; ++id) {
    snapshot.nodes.push_back(MakeNode(id, random));
    if (id == 0) continue;
    snapshot.edges.push_back({parent_of(id, random), id, EdgeKind::kDerive});
    if (random() % 20 == 0) {
      const auto other = static_cast<NodeId>(random() % static_cast<std::uint64_t>(id));
      snapshot.edges.push_back({other, id, EdgeKind::kDuplicate});
    }
  }
  return snapshot;
}

Snapshot RandomTree(std::int64_t count) {
  return MakeSnapshot(count, [](NodeId id, std::mt19937_64& random) {
    return static_cast<NodeId>(random() % static_cast<std::uint64_t>(id));
  });
}

SearchGraph Load(const Snapshot& snapshot) {
  SearchGraph graph;
  for (const GraphNode& node : snapshot.nodes) graph.AddNode(node);
  for (const GraphEdge& edge : snapshot.edges) graph.AddDerivation(edge.parent, edge.child, edge.kind);
  return graph;
}

// Built once per size, outside the timed loops.
SearchGraph& RandomGraph(std::int64_t count) {
  static std::map<std::int64_t, SearchGraph> graphs;
  auto it = graphs.find(count);
  if (it == graphs.end()) it = graphs.emplace(count, Load(RandomTree(count))).first;
  return it->second;
}

void BM_LoadGraph(benchmark::State& state) {
  const Snapshot snapshot = RandomTree(state.range(0));
  for (auto _ : state) {
    SearchGraph graph = Load(snapshot);
    benchmark::DoNotOptimize(graph.EdgeCount());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.counters["edges"] = static_cast<double>(snapshot.edges.size());
}
BENCHMARK(BM_LoadGraph)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_BestK(benchmark::State& state) {
  const SearchGraph& graph = RandomGraph(state.range(0));
  const auto k = static_cast<std::size_t>(state.range(1));
  for (auto _ : state) benchmark::DoNotOptimize(graph.Best(k));
}
BENCHMARK(BM_BestK)->Args({100000, 10});

void BM_SetResult(benchmark::State& state) {
  SearchGraph& graph = RandomGraph(state.range(0));
  std::mt19937_64 random(7);
  const auto count = static_cast<std::uint64_t>(state.range(0));
  for (auto _ : state) {
    const auto id = static_cast<NodeId>(random() % count);
    if (random() % 4 == 0) {
      graph.SetResult(id, NodeStatus::kWrong, std::nullopt);
    } else {
      graph.SetResult(id, NodeStatus::kMeasured, static_cast<double>(random() % 100000) / 10000.0);
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SetResult)->Arg(100000);

void BM_Lineage(benchmark::State& state) {
  constexpr std::int64_t kNodes = 100000;
  const std::int64_t depth = state.range(0);
  const std::int64_t width = kNodes / depth;
  // Node i derives from i - width; the first layer from the root, node 0.
  const SearchGraph graph = Load(MakeSnapshot(
      kNodes, [width](NodeId id, std::mt19937_64&) { return id >= width ? id - width : NodeId{0}; }));
  std::mt19937_64 random(7);
  std::size_t length = 0;
  for (auto _ : state) {
    // A node in the last layer: `depth` generations below the first.
    const auto id = kNodes - 1 - static_cast<NodeId>(random() % static_cast<std::uint64_t>(width));
    const std::vector<NodeId> lineage = graph.Lineage(id);
    length = lineage.size();
    benchmark::DoNotOptimize(lineage.data());
  }
  state.counters["length"] = static_cast<double>(length);
}
BENCHMARK(BM_Lineage)->Arg(50);

}  // namespace
}  // namespace kestrel

BENCHMARK_MAIN();
