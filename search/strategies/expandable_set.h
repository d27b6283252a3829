#pragma once
// ExpandableSet: the expandable nodes (measured, with a speedup, not
// exhausted) in the graph's insertion order, kept incrementally, so that the
// k-th of them is found in O(log n) instead of listing them all (random's
// choice at 1e6 nodes). A Fenwick tree counts members over insertion
// indices; it follows the graph through its insertion order and change
// journal (SearchGraph::ChangeCount), as UcbIndex does.
//
// Thread-safety: none (the strategy's).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "graph/search_graph.h"

namespace kestrel::strategies {

class ExpandableSet {
 public:
  // Brings the set up to date with `graph`; `exhausted` says which measured
  // nodes the strategy no longer expands.
  void Catch(const SearchGraph& graph, const std::function<bool(NodeId)>& exhausted);
  // A node the strategy exhausted: out at the next Catch.
  void Drop(NodeId id) { dropped_.push_back(id); }
  // Forget everything: the next Catch reads the whole graph.
  void Reset() { *this = ExpandableSet(); }

  std::size_t size() const { return count_; }
  // The k-th expandable node in insertion order (k < size()).
  NodeId At(const SearchGraph& graph, std::size_t k) const;

 private:
  void Set(std::size_t index, bool member);
  void Grow(std::size_t capacity);

  std::vector<std::uint8_t> member_;  // by insertion index
  std::vector<std::int64_t> tree_;    // Fenwick sums, 1-based: tree_[0] unused
  std::size_t count_ = 0;
  std::size_t seen_ = 0;     // nodes read, a prefix of the insertion order
  std::size_t journal_ = 0;  // changes read
  std::vector<NodeId> dropped_;
};

}  // namespace kestrel::strategies
