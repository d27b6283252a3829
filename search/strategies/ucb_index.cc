#include "search/strategies/ucb_index.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kestrel::strategies {

double UcbIndex::Q(const Entry& entry) const {
  const double a = 1.0 - weights_.subtree_weight;
  return a * entry.own + (1.0 - a) * entry.lineage;
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
  ++entry_count_;
  by_expansions_[entry.expansions].insert({-Q(entry), id});
  PushLineage(entry.lineage, id);
  total_expansions_ += entry.expansions;
}

void UcbIndex::PushLineage(double lineage, NodeId id) {
  lineages_.emplace_back(lineage, id);
  std::push_heap(lineages_.begin(), lineages_.end());
  if (lineages_.size() <= 2 * entry_count_ + 1024) return;
  // Mostly stale: rebuilt from the entries (amortized over the pushes).
  lineages_.clear();
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].expansions >= 0) lineages_.emplace_back(entries_[i].lineage, graph_->NodeAt(i).id);
  }
  std::make_heap(lineages_.begin(), lineages_.end());
}

double UcbIndex::TopLineage() {
  for (;;) {
    const auto& [lineage, id] = lineages_.front();
    if (const Entry* entry = Find(id); entry != nullptr && entry->lineage == lineage) return lineage;
    std::pop_heap(lineages_.begin(), lineages_.end());
    lineages_.pop_back();
  }
}

void UcbIndex::Erase(NodeId id) {
  const Entry* found = Find(id);
  if (found == nullptr) return;
  const Entry entry = *found;
  const auto group = by_expansions_.find(entry.expansions);
  group->second.erase({-Q(entry), id});
  if (group->second.empty()) by_expansions_.erase(group);
  total_expansions_ -= entry.expansions;
  entries_[graph_->IndexOf(id)] = Entry{};
  --entry_count_;
}

void UcbIndex::Drop(NodeId id) { Erase(id); }

void UcbIndex::Reset() { *this = UcbIndex(weights_); }

void UcbIndex::Fold(const SearchGraph& graph, NodeId id, double speedup) {
  subtree_.Fold(graph, id, speedup, [this](NodeId raised, double best) {
    if (const Entry* entry = Find(raised); entry != nullptr && entry->lineage < best) {
      Entry moved = *entry;
      moved.lineage = best;
      Erase(raised);
      Insert(raised, moved);
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
    Erase(id);
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
  // node as it is now, so the journal so far is in it. Each set is filled
  // from sorted keys at its end (linear), not searched a million times.
  subtree_.Build(graph);
  entries_.reserve(graph.NodeCount() + graph.NodeCount() / 8 + 1024);  // as SubtreeBest's
  entries_.assign(graph.NodeCount(), Entry{});
  std::vector<std::pair<int, Key>> keys;  // (e, key) of every entry
  for (; seen_ < graph.NodeCount(); ++seen_) {
    const GraphNode& node = graph.NodeAt(seen_);
    if (node.status != NodeStatus::kMeasured || !node.speedup || exhausted(node.id)) continue;
    const Entry entry{*node.speedup, std::max(*node.speedup, subtree_.Of(node.id)), node.expansions};
    entries_[seen_] = entry;
    ++entry_count_;
    total_expansions_ += entry.expansions;
    keys.push_back({entry.expansions, {-Q(entry), node.id}});
    lineages_.emplace_back(entry.lineage, node.id);
  }
  std::sort(keys.begin(), keys.end());
  std::make_heap(lineages_.begin(), lineages_.end());
  for (const auto& [expansions, key] : keys) {
    std::set<Key>& group = by_expansions_[expansions];
    group.insert(group.end(), key);
  }
  journal_ = graph.ChangeCount();
}

std::optional<NodeId> UcbIndex::Select(const SearchGraph& graph, const std::function<bool(NodeId)>& exhausted,
                                       std::mt19937_64& rng) {
  Catch(graph, exhausted);
  if (entry_count_ == 0) return std::nullopt;
  const double best = TopLineage();  // s*
  const double log_total = std::log(1.0 + total_expansions_);
  // Scores within 1e-9 of each other tie, as in PickByUcb; a tie goes to a
  // random one of the tied nodes (at most kTied per expansion count).
  constexpr double kTie = 1e-9;
  constexpr std::size_t kTied = 16;
  std::vector<std::pair<double, NodeId>> heads;  // score, node
  double top = -std::numeric_limits<double>::infinity();
  for (const auto& [expansions, group] : by_expansions_) {
    const double explore = weights_.exploration * std::sqrt(log_total / (1.0 + expansions));
    const double head_q = -group.begin()->first;
    std::size_t taken = 0;
    for (auto it = group.begin(); it != group.end() && taken < kTied; ++it, ++taken) {
      const double q = -it->first;
      if (head_q - q > kTie * std::max(1.0, best)) break;
      const double score = (best > 0 ? q / best : 0.0) + explore;
      heads.emplace_back(score, it->second);
      top = std::max(top, score);
    }
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
