#include "search/strategies/ucb_index.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/check.h"
#include "core/huge_pages.h"

namespace kestrel::strategies {
namespace {

// The heaps' orders: s* by value alone; the fastest by speedup, then the
// lower id (a max-heap's top is its greatest element, so a higher id is less).
bool LowerLineage(const std::pair<double, NodeId>& a, const std::pair<double, NodeId>& b) { return a < b; }
bool Slower(const std::pair<double, NodeId>& a, const std::pair<double, NodeId>& b) {
  return a.first < b.first || (a.first == b.first && a.second > b.second);
}

}  // namespace

UcbIndex::UcbIndex(UcbWeights weights, int group_count, Membership membership, bool keep_fastest)
    : weights_(weights),
      membership_(std::move(membership)),
      keep_fastest_(keep_fastest),
      groups_(static_cast<std::size_t>(group_count)) {
  KESTREL_CHECK(group_count >= 1, "a UcbIndex needs a group");
}

double UcbIndex::Q(const Entry& entry) const {
  const double a = 1.0 - weights_.subtree_weight;
  return a * entry.own + (1.0 - a) * entry.lineage;
}

const std::vector<int>& UcbIndex::GroupsOf(NodeId id) {
  groups_buffer_.clear();
  if (membership_) {
    membership_(id, groups_buffer_);
  } else {
    groups_buffer_.push_back(0);
  }
  return groups_buffer_;
}

const UcbIndex::Entry* UcbIndex::Find(NodeId id) const {
  if (graph_ == nullptr || !graph_->Contains(id)) return nullptr;
  const std::size_t index = graph_->IndexOf(id);
  if (index >= entries_.size() || entries_[index].expansions < 0) return nullptr;
  return &entries_[index];
}

void UcbIndex::Insert(NodeId id, const Entry& entry) {
  const std::size_t index = graph_->IndexOf(id);
  if (index >= entries_.size()) entries_.resize(graph_->NodeCount());
  entries_[index] = entry;
  for (int group : GroupsOf(id)) Enter(groups_[static_cast<std::size_t>(group)], id, entry);
}

void UcbIndex::Enter(Group& group, NodeId id, const Entry& entry) {
  ++group.count;
  group.by_expansions[entry.expansions].Insert({-Q(entry), id});
  group.total_expansions += entry.expansions;
  Push(group, &Group::lineages, entry.lineage, id);
  if (keep_fastest_) Push(group, &Group::speedups, entry.own, id);
}

void UcbIndex::Leave(Group& group, NodeId id, const Entry& entry) {
  const auto set = group.by_expansions.find(entry.expansions);
  const bool erased = set != group.by_expansions.end() && set->second.Erase({-Q(entry), id}, graph_->IndexOf(id));
  KESTREL_CHECK(erased, "a node's groups grew without a Join");
  if (set->second.empty()) group.by_expansions.erase(set);
}

void UcbIndex::Replace(NodeId id, const Entry& entry) {
  Entry& current = entries_[graph_->IndexOf(id)];
  const Entry old = current;
  current = entry;
  const bool moved = old.expansions != entry.expansions || Q(old) != Q(entry);
  for (int index : GroupsOf(id)) {
    Group& group = groups_[static_cast<std::size_t>(index)];
    if (moved) {
      Leave(group, id, old);
      group.by_expansions[entry.expansions].Insert({-Q(entry), id});
      group.total_expansions += entry.expansions - old.expansions;
    }
    if (old.lineage != entry.lineage) Push(group, &Group::lineages, entry.lineage, id);
    if (old.own != entry.own && keep_fastest_) Push(group, &Group::speedups, entry.own, id);
  }
}

void UcbIndex::Push(Group& group, std::vector<Ranked> Group::*heap, double value, NodeId id) {
  std::vector<Ranked>& items = group.*heap;
  items.emplace_back(value, id);
  std::push_heap(items.begin(), items.end(), heap == &Group::lineages ? LowerLineage : Slower);
  // Mostly stale: rebuilt from the sets (amortized over the pushes).
  if (items.size() > 2 * group.count + 1024) Rebuild(group);
}

void UcbIndex::Rebuild(Group& group) {
  group.lineages.clear();
  group.speedups.clear();
  for (const auto& [expansions, set] : group.by_expansions) {
    set.VisitAll([&](const Key& key) {
      const Entry* entry = Find(key.second);
      group.lineages.emplace_back(entry->lineage, key.second);
      if (keep_fastest_) group.speedups.emplace_back(entry->own, key.second);
    });
  }
  std::make_heap(group.lineages.begin(), group.lineages.end(), LowerLineage);
  std::make_heap(group.speedups.begin(), group.speedups.end(), Slower);
}

double UcbIndex::TopLineage(Group& group) {
  for (;;) {
    const auto& [lineage, id] = group.lineages.front();
    if (const Entry* entry = Find(id); entry != nullptr && entry->lineage == lineage) return lineage;
    std::pop_heap(group.lineages.begin(), group.lineages.end(), LowerLineage);
    group.lineages.pop_back();
  }
}

void UcbIndex::Erase(NodeId id) {
  const Entry* found = Find(id);
  if (found == nullptr) return;
  const Entry entry = *found;
  for (int index : GroupsOf(id)) {
    Group& group = groups_[static_cast<std::size_t>(index)];
    Leave(group, id, entry);
    group.total_expansions -= entry.expansions;
    --group.count;
  }
  entries_[graph_->IndexOf(id)] = Entry{};
}

void UcbIndex::Drop(NodeId id) { Erase(id); }

void UcbIndex::Join(NodeId id, int group) {
  if (const Entry* entry = Find(id); entry != nullptr) Enter(groups_[static_cast<std::size_t>(group)], id, *entry);
}

void UcbIndex::Reset() {
  *this = UcbIndex(weights_, static_cast<int>(groups_.size()), std::move(membership_), keep_fastest_);
}

void UcbIndex::Fold(const SearchGraph& graph, NodeId id, double speedup) {
  subtree_.Fold(graph, id, speedup, [this](NodeId raised, double best) {
    if (const Entry* entry = Find(raised); entry != nullptr && entry->lineage < best) {
      Entry moved = *entry;
      moved.lineage = best;
      Replace(raised, moved);
    }
  });
}

void UcbIndex::Refresh(const SearchGraph& graph, NodeId id, const std::function<bool(NodeId)>& exhausted) {
  const GraphNode& node = graph.Node(id);
  const bool expandable = node.status == NodeStatus::kMeasured && node.speedup && !exhausted(id);
  if (node.status == NodeStatus::kMeasured && node.speedup) Fold(graph, id, *node.speedup);
  if (!expandable) {
    Erase(id);
    return;
  }
  const Entry entry{*node.speedup, std::max(*node.speedup, subtree_.Of(id)), node.expansions};
  if (const Entry* found = Find(id); found != nullptr) {
    const Entry& old = *found;
    if (old.own == entry.own && old.lineage == entry.lineage && old.expansions == entry.expansions) return;
    Replace(id, entry);
    return;
  }
  Insert(id, entry);
}

void UcbIndex::Catch(const SearchGraph& graph, const std::function<bool(NodeId)>& exhausted) {
  graph_ = &graph;
  if (seen_ == 0) Build(graph, exhausted);
  for (; seen_ < graph.NodeCount(); ++seen_) Refresh(graph, graph.NodeAt(seen_).id, exhausted);
  for (; journal_ < graph.ChangeCount(); ++journal_) Refresh(graph, graph.ChangedAt(journal_), exhausted);
}

void UcbIndex::Build(const SearchGraph& graph, const std::function<bool(NodeId)>& exhausted) {
  // The first read (a resumed graph): v in one pass, then every expandable
  // node as it is now, so the journal so far is in it. Each expansion
  // count's ranking is loaded as a heap (linear), neither sorted whole nor
  // searched a million times.
  subtree_.Build(graph);
  ReserveHuge(entries_, graph.NodeCount() + graph.NodeCount() / 8 + 1024);  // as SubtreeBest's
  entries_.assign(graph.NodeCount(), Entry{});
  // Per group, per expansion count: its members' keys, slotted by insertion index.
  std::vector<std::map<int, std::vector<LazyRanking<Key>::Slotted>>> keys(groups_.size());
  for (; seen_ < graph.NodeCount(); ++seen_) {
    const GraphNode& node = graph.NodeAt(seen_);
    if (node.status != NodeStatus::kMeasured || !node.speedup || exhausted(node.id)) continue;
    const Entry entry{*node.speedup, std::max(*node.speedup, subtree_.Of(node.id)), node.expansions};
    entries_[seen_] = entry;
    for (int index : GroupsOf(node.id)) {
      Group& group = groups_[static_cast<std::size_t>(index)];
      ++group.count;
      group.total_expansions += entry.expansions;
      keys[static_cast<std::size_t>(index)][entry.expansions].push_back({{-Q(entry), node.id}, seen_});
      group.lineages.emplace_back(entry.lineage, node.id);
      if (keep_fastest_) group.speedups.emplace_back(entry.own, node.id);
    }
  }
  for (std::size_t index = 0; index < groups_.size(); ++index) {
    Group& group = groups_[index];
    std::make_heap(group.lineages.begin(), group.lineages.end(), LowerLineage);
    std::make_heap(group.speedups.begin(), group.speedups.end(), Slower);
    for (auto& [expansions, members] : keys[index]) group.by_expansions[expansions].Load(std::move(members));
  }
  journal_ = graph.ChangeCount();
}

std::optional<NodeId> UcbIndex::Fastest(const SearchGraph& graph, const std::function<bool(NodeId)>& exhausted,
                                        int index) {
  KESTREL_CHECK(keep_fastest_, "Fastest of a UcbIndex that does not keep it");
  Catch(graph, exhausted);
  Group& group = groups_[static_cast<std::size_t>(index)];
  if (group.count == 0) return std::nullopt;
  for (;;) {
    const auto& [speedup, id] = group.speedups.front();
    if (const Entry* entry = Find(id); entry != nullptr && entry->own == speedup) return id;
    std::pop_heap(group.speedups.begin(), group.speedups.end(), Slower);
    group.speedups.pop_back();
  }
}

std::optional<NodeId> UcbIndex::Select(const SearchGraph& graph, const std::function<bool(NodeId)>& exhausted,
                                       std::mt19937_64& rng, int index) {
  Catch(graph, exhausted);
  Group& group = groups_[static_cast<std::size_t>(index)];
  if (group.count == 0) return std::nullopt;
  const double best = TopLineage(group);  // s*
  const double log_total = std::log(1.0 + group.total_expansions);
  // Scores within 1e-9 of each other tie, as in PickByUcb; a tie goes to a
  // random one of the tied nodes (at most kTied per expansion count).
  constexpr double kTie = 1e-9;
  constexpr std::size_t kTied = 16;
  std::vector<std::pair<double, NodeId>> heads;  // score, node
  double top = -std::numeric_limits<double>::infinity();
  for (const auto& [expansions, set] : group.by_expansions) {
    const double explore = weights_.exploration * std::sqrt(log_total / (1.0 + expansions));
    std::optional<double> head_q;
    std::size_t taken = 0;
    set.VisitInOrder([&](const Key& key) {
      const double q = -key.first;
      if (!head_q) head_q = q;
      if (*head_q - q > kTie * std::max(1.0, best)) return false;
      const double score = (best > 0 ? q / best : 0.0) + explore;
      heads.emplace_back(score, key.second);
      top = std::max(top, score);
      return ++taken < kTied;
    });
  }
  std::vector<NodeId> tied;
  for (const auto& [score, id] : heads) {
    if (top - score <= kTie) tied.push_back(id);
  }
  std::sort(tied.begin(), tied.end());
  if (tied.size() == 1) return tied.front();
  std::uniform_int_distribution<std::size_t> pick(0, tied.size() - 1);
  return tied[pick(rng)];
}

}  // namespace kestrel::strategies
