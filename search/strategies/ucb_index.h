#pragma once
// UcbIndex: graph-ucb's choice (strategies.h, PickByUcb's score) kept
// incrementally, so that a selection costs the same at 1e3 and 1e6 nodes.
//
// The score a * s(n)/s* + (1 - a) * v(n)/s* + c * sqrt(ln(1 + E)/(1 + e(n)))
// changes for every node whenever s* or E changes, but among nodes with the
// same expansion count e it orders them by q(n) = a * s(n) + (1 - a) * v(n)
// alone. So the index keeps the expandable nodes in one ordered set per
// expansion count, best q first (ties: lower id), and a selection scores the
// head of each set: O(distinct e + log n). It follows the graph through its
// insertion order and its change journal (SearchGraph::ChangeCount), so a
// selection also folds in only what changed since the last one: a newly
// measured node raises v along its lineage, an expansion moves a node to the
// next set. Exact: the same scores as PickByUcb over every expandable node;
// scores within 1e-9 tie, and a tie goes to a random one of the tied nodes
// (drawn once per selection, where PickByUcb drew once per node).
//
// Thread-safety: none (the strategy's).

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "graph/search_graph.h"
#include "search/strategies/strategies.h"

namespace kestrel::strategies {

class UcbIndex {
 public:
  explicit UcbIndex(UcbWeights weights) : weights_(weights) {}

  // Brings the index up to date with `graph`, then the expandable node of
  // highest score; nullopt when there is none. `exhausted` says which
  // measured nodes the strategy no longer expands.
  std::optional<NodeId> Select(const SearchGraph& graph, const std::function<bool(NodeId)>& exhausted,
                               std::mt19937_64& rng);
  // A node the strategy exhausted: never chosen again.
  void Drop(NodeId id);
  // Forget everything: the next Select reads the whole graph (a restored
  // strategy whose exhausted set was replaced).
  void Reset();

 private:
  struct Entry {
    double own = 0;       // s(n)
    double lineage = 0;   // max(s(n), v(n))
    int expansions = -1;  // e(n); -1: the node is not an entry
  };
  using Key = std::pair<double, NodeId>;  // (-q, id): best first, then lower id

  void Catch(const SearchGraph& graph, const std::function<bool(NodeId)>& exhausted);
  // The first read of a graph: every expandable node, the sets filled from
  // sorted input in one pass.
  void Build(const SearchGraph& graph, const std::function<bool(NodeId)>& exhausted);
  // The node's entry; nullptr when it has none.
  const Entry* Find(NodeId id) const;
  // Re-reads one node: enters, moves or leaves the sets.
  void Refresh(const SearchGraph& graph, NodeId id, const std::function<bool(NodeId)>& exhausted);
  // Raises v along the lineage of a node measured at `speedup`.
  void Fold(const SearchGraph& graph, NodeId id, double speedup);
  void Insert(NodeId id, const Entry& entry);
  void Erase(NodeId id);
  double Q(const Entry& entry) const;
  // s*: the top of `lineages_`, stale elements dropped; entries exist.
  double TopLineage();
  void PushLineage(double lineage, NodeId id);

  UcbWeights weights_;
  std::size_t seen_ = 0;     // nodes read, a prefix of the insertion order
  std::size_t journal_ = 0;  // changes read
  SubtreeBest subtree_;  // v(n), folded in through Fold only (its Update is not used)
  const SearchGraph* graph_ = nullptr;  // the graph read last (a strategy serves one)
  std::vector<Entry> entries_;  // by insertion index (SearchGraph::IndexOf): the expandable nodes
  std::size_t entry_count_ = 0;
  std::map<int, std::set<Key>> by_expansions_;
  // (max(s, v), node) of the entries, a max-heap: s* is its top. An element
  // whose node's entry no longer holds that value is left in place and
  // dropped when it comes to the top (an update is a push, not a search).
  std::vector<std::pair<double, NodeId>> lineages_;
  double total_expansions_ = 0;     // E
};

}  // namespace kestrel::strategies
