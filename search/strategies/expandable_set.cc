#include "search/strategies/expandable_set.h"

#include <bit>

#include "core/check.h"

namespace kestrel::strategies {

void ExpandableSet::Grow(std::size_t capacity) {
  // Rebuilt in O(n) from the members: each sum passes itself to its parent.
  member_.resize(capacity, 0);
  tree_.assign(capacity + 1, 0);
  for (std::size_t i = 1; i <= capacity; ++i) {
    tree_[i] += member_[i - 1];
    const std::size_t parent = i + (i & (~i + 1));
    if (parent <= capacity) tree_[parent] += tree_[i];
  }
}

void ExpandableSet::Set(std::size_t index, bool member) {
  if (index >= member_.size()) Grow(std::max<std::size_t>(1024, std::bit_ceil(index + 1)));
  if (static_cast<bool>(member_[index]) == member) return;
  member_[index] = member ? 1 : 0;
  const std::int64_t delta = member ? 1 : -1;
  count_ = member ? count_ + 1 : count_ - 1;
  for (std::size_t i = index + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += delta;
}

void ExpandableSet::Catch(const SearchGraph& graph, const std::function<bool(NodeId)>& exhausted) {
  const auto read = [&](const GraphNode& node, std::size_t index) {
    Set(index, node.status == NodeStatus::kMeasured && node.speedup && !exhausted(node.id));
  };
  if (seen_ == 0 && graph.NodeCount() > member_.size()) Grow(std::bit_ceil(graph.NodeCount()));
  for (; seen_ < graph.NodeCount(); ++seen_) read(graph.NodeAt(seen_), seen_);
  for (; journal_ < graph.ChangeCount(); ++journal_) {
    const NodeId id = graph.ChangedAt(journal_);
    const std::size_t index = graph.IndexOf(id);
    read(graph.NodeAt(index), index);
  }
  for (NodeId id : dropped_) {
    if (graph.Contains(id)) Set(graph.IndexOf(id), false);
  }
  dropped_.clear();
}

NodeId ExpandableSet::At(const SearchGraph& graph, std::size_t k) const {
  KESTREL_CHECK(k < count_, "an expandable node past the set");
  // The smallest index whose prefix count is k + 1: descend the tree.
  const std::size_t capacity = tree_.size() - 1;
  std::size_t position = 0;
  std::int64_t left = static_cast<std::int64_t>(k) + 1;
  for (std::size_t step = std::bit_floor(capacity); step > 0; step >>= 1) {
    if (position + step <= capacity && tree_[position + step] < left) {
      position += step;
      left -= tree_[position];
    }
  }
  return graph.NodeAt(position).id;
}

}  // namespace kestrel::strategies
