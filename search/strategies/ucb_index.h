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
// Groups (islands): the expandable nodes may be split into groups, a node in
// one or more of them as `membership` says; each group has its own sets, s*
// and E, so a selection within a group is PickByUcb over that group's members
// (v stays the subtree best over the whole graph). A node's groups may only
// grow, each addition told through Join. Without a membership there is one
// group, 0, of every expandable node.
//
// Thread-safety: none (the strategy's).

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "graph/lazy_ranking.h"
#include "graph/search_graph.h"
#include "search/strategies/strategies.h"

namespace kestrel::strategies {

class UcbIndex {
 public:
  // Appends the groups `id` belongs to, each in [0, group count).
  using Membership = std::function<void(NodeId id, std::vector<int>& groups)>;

  // One group of every expandable node (graph-ucb).
  explicit UcbIndex(UcbWeights weights) : UcbIndex(weights, 1, nullptr, false) {}
  // `group_count` groups, each node in those `membership` names; with
  // `keep_fastest`, each group's fastest member too (Fastest).
  UcbIndex(UcbWeights weights, int group_count, Membership membership, bool keep_fastest);

  // Brings the index up to date with `graph`, then the expandable node of
  // `group` of highest score; nullopt when the group has none. `exhausted`
  // says which measured nodes the strategy no longer expands.
  std::optional<NodeId> Select(const SearchGraph& graph, const std::function<bool(NodeId)>& exhausted,
                               std::mt19937_64& rng, int group = 0);
  // Brings the index up to date, then the fastest expandable node of `group`
  // (ties: lower id); nullopt when it has none. O(log n) amortized; only for
  // an index that keeps the fastest.
  std::optional<NodeId> Fastest(const SearchGraph& graph, const std::function<bool(NodeId)>& exhausted, int group);
  // The membership now also puts `id` in `group`: it enters that group's
  // sets if it is expandable (else it enters them when it becomes so).
  void Join(NodeId id, int group);
  // A node the strategy exhausted: never chosen again.
  void Drop(NodeId id);
  // Forget everything: the next Select reads the whole graph (a restored
  // strategy whose exhausted set or membership was replaced).
  void Reset();

 private:
  struct Entry {
    double own = 0;       // s(n)
    double lineage = 0;   // max(s(n), v(n))
    int expansions = -1;  // e(n); -1: the node is not an entry
  };
  using Key = std::pair<double, NodeId>;  // (-q, id): best first, then lower id
  using Ranked = std::pair<double, NodeId>;  // (value, node) in a lazy max-heap
  // One group's members. The heaps are lazy: an element whose node's entry
  // no longer holds that value is left in place and dropped when it comes to
  // the top (an update is a push, not a search).
  struct Group {
    // Slots: insertion indexes. A resumed graph's nodes are the first batch
    // of each (sorted only as far as selections read).
    std::map<int, LazyRanking<Key>> by_expansions;
    std::vector<Ranked> lineages;  // (max(s, v), node): s* is the top
    std::vector<Ranked> speedups;  // (s, node), lower id first on ties; kept with keep_fastest_
    std::size_t count = 0;         // members with an entry
    double total_expansions = 0;   // E
  };

  void Catch(const SearchGraph& graph, const std::function<bool(NodeId)>& exhausted);
  // The first read of a graph: every expandable node, each expansion
  // count's ranking loaded in linear time.
  void Build(const SearchGraph& graph, const std::function<bool(NodeId)>& exhausted);
  // The groups of `id`, in a buffer that the next call overwrites.
  const std::vector<int>& GroupsOf(NodeId id);
  // The node's entry; nullptr when it has none.
  const Entry* Find(NodeId id) const;
  // Re-reads one node: enters, moves or leaves the sets.
  void Refresh(const SearchGraph& graph, NodeId id, const std::function<bool(NodeId)>& exhausted);
  // Raises v along the lineage of a node measured at `speedup`.
  void Fold(const SearchGraph& graph, NodeId id, double speedup);
  void Insert(NodeId id, const Entry& entry);
  void Enter(Group& group, NodeId id, const Entry& entry);
  // Takes the node's key out of the group's sets (it must be there).
  void Leave(Group& group, NodeId id, const Entry& entry);
  // The node's entry becomes `entry` in every group of it.
  void Replace(NodeId id, const Entry& entry);
  void Erase(NodeId id);
  double Q(const Entry& entry) const;
  // s*: the top of the group's `lineages`, stale elements dropped; the group
  // has members.
  double TopLineage(Group& group);
  void Push(Group& group, std::vector<Ranked> Group::*heap, double value, NodeId id);
  // Both heaps anew from the group's sets (when mostly stale).
  void Rebuild(Group& group);

  UcbWeights weights_;
  Membership membership_;
  bool keep_fastest_;
  std::vector<int> groups_buffer_;
  std::size_t seen_ = 0;     // nodes read, a prefix of the insertion order
  std::size_t journal_ = 0;  // changes read
  SubtreeBest subtree_;  // v(n), folded in through Fold only (its Update is not used)
  const SearchGraph* graph_ = nullptr;  // the graph read last (a strategy serves one)
  std::vector<Entry> entries_;  // by insertion index (SearchGraph::IndexOf): the expandable nodes
  std::vector<Group> groups_;
};

}  // namespace kestrel::strategies
