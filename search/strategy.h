#pragma once
// Strategy: decides which node of the graph to expand next (ARCHITECTURE.md).
// Only measured nodes are expanded. A node whose mutators all declined is
// exhausted for the rest of the run.
//
//   graph-ucb  score(n) = s(n)/s* + c * sqrt(ln(1 + E) / (1 + e(n)))
//              s(n) the node's speedup, s* the best speedup in the graph,
//              E the total expansions of the expandable nodes, e(n) the
//              node's expansions (derivations it was the parent of), c the
//              config's `exploration`. Exploits fast nodes, revisits the
//              rarely expanded.
//   greedy     the fastest node not yet exhausted.
//   random     a uniformly random measured node (the baseline).
//
// Thread-safety: none; the engine calls it under the graph's mutex.

#include <memory>
#include <optional>
#include <random>
#include <unordered_set>

#include "graph/search_graph.h"
#include "search/run_config.h"

namespace kestrel {

class Strategy {
 public:
  virtual ~Strategy() = default;
  // The node to expand next, or nullopt when no node can be expanded now.
  virtual std::optional<NodeId> Select(const SearchGraph& graph, std::mt19937_64& rng) = 0;
  void MarkExhausted(NodeId id) { exhausted_.insert(id); }
  bool IsExhausted(NodeId id) const { return exhausted_.count(id) > 0; }

 protected:
  // Measured nodes that are not exhausted.
  std::vector<NodeId> Expandable(const SearchGraph& graph) const;

 private:
  std::unordered_set<NodeId> exhausted_;
};

// InvalidArgument for an unknown name.
Result<std::unique_ptr<Strategy>> MakeStrategy(const StrategyConfig& config);

}  // namespace kestrel
