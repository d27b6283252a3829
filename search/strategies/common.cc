#include <algorithm>
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/huge_pages.h"
#include "search/strategies/strategies.h"

namespace kestrel::strategies {

void SubtreeBest::Update(const SearchGraph& graph) {
  std::vector<NodeId> unfinished;
  const auto look = [&](NodeId id) {
    const GraphNode& node = graph.Node(id);
    if (node.status == NodeStatus::kMeasured && node.speedup) {
      Fold(graph, id, *node.speedup);
    } else if (!IsFinal(node.status)) {
      unfinished.push_back(id);
    }
  };
  for (NodeId id : unfinished_) look(id);
  for (; seen_ < graph.NodeCount(); ++seen_) look(graph.NodeAt(seen_).id);
  unfinished_ = std::move(unfinished);
}

void SubtreeBest::Build(const SearchGraph& graph) {
  graph_ = &graph;
  unfinished_.clear();
  // Room for the nodes a run adds: the first of them does not move the array.
  ReserveHuge(best_, graph.NodeCount() + graph.NodeCount() / 8 + 1024);
  best_.assign(graph.NodeCount(), 0.0);
  for (std::size_t i = graph.NodeCount(); i-- > 0;) {
    const GraphNode& node = graph.NodeAt(i);
    double& best = best_[i];
    if (node.status == NodeStatus::kMeasured && node.speedup) best = std::max(best, *node.speedup);
    if (!IsFinal(node.status)) unfinished_.push_back(node.id);
    if (best <= 0) continue;
    if (const auto parent = graph.FirstParentAt(i)) {
      double& above = best_[*parent];
      above = std::max(above, best);
    }
  }
  std::reverse(unfinished_.begin(), unfinished_.end());
  seen_ = graph.NodeCount();
}

double& SubtreeBest::At(const SearchGraph& graph, NodeId id) {
  graph_ = &graph;
  const std::size_t index = graph.IndexOf(id);
  if (index >= best_.size()) best_.resize(graph.NodeCount(), 0.0);
  return best_[index];
}

void SubtreeBest::Fold(const SearchGraph& graph, NodeId id, double speedup,
                       const std::function<void(NodeId, double)>& raised) {
  // Raise v along the lineage, from the node up to its root; an ancestor
  // that already holds as much was raised by a node below it, and so were
  // all of its own ancestors.
  const std::vector<NodeId> lineage = graph.Lineage(id);
  for (auto it = lineage.rbegin(); it != lineage.rend(); ++it) {
    double& best = At(graph, *it);
    if (best >= speedup) break;
    best = speedup;
    if (raised) raised(*it, speedup);
  }
}

double SubtreeBest::Of(NodeId id) const {
  if (graph_ == nullptr || !graph_->Contains(id)) return 0.0;
  const std::size_t index = graph_->IndexOf(id);
  return index < best_.size() ? best_[index] : 0.0;
}

NodeId PickByUcb(const SearchGraph& graph, const std::vector<NodeId>& nodes, const SubtreeBest& subtree,
                 const UcbWeights& weights, std::mt19937_64& rng) {
  struct Terms {
    double own;      // s(n)
    double lineage;  // v(n); max() guards a cache that has not seen the node
    int expansions;  // e(n)
  };
  std::vector<Terms> terms;
  terms.reserve(nodes.size());
  double best = 0;
  double total_expansions = 0;
  for (NodeId id : nodes) {
    const GraphNode& node = graph.Node(id);
    const double own = *node.speedup;
    terms.push_back({own, std::max(own, subtree.Of(id)), node.expansions});
    best = std::max(best, terms.back().lineage);
    total_expansions += node.expansions;
  }
  const double a = 1.0 - weights.subtree_weight;
  const double log_total = std::log(1.0 + total_expansions);
  std::uniform_real_distribution<double> tie(0.0, 1e-9);
  std::size_t chosen = 0;
  double chosen_score = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const Terms& t = terms[i];
    const double exploit = best > 0 ? (a * t.own + (1.0 - a) * t.lineage) / best : 0.0;
    const double explore = std::sqrt(log_total / (1.0 + t.expansions));
    const double score = exploit + weights.exploration * explore + tie(rng);
    if (score > chosen_score) {
      chosen_score = score;
      chosen = i;
    }
  }
  return nodes[chosen];
}

Error StateError(const std::string& what, const std::string& expected) {
  return Error::InvalidArgument("strategy state: " + what + ": expected " + expected);
}

Result<const nlohmann::json*> StateField(const nlohmann::json& state, const std::string& field) {
  const auto it = state.find(field);
  if (it == state.end()) return Fail(StateError(field, "a value (the field is missing)"));
  return &*it;
}

std::optional<std::int64_t> IntegerIn(const nlohmann::json& value, std::int64_t min, std::int64_t max) {
  if (!value.is_number_integer()) return std::nullopt;
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(max)) return std::nullopt;
  const std::int64_t number = value.get<std::int64_t>();
  if (number < min || number > max) return std::nullopt;
  return number;
}

Result<std::int64_t> StateInteger(const nlohmann::json& value, const std::string& what, std::int64_t min,
                                  std::int64_t max) {
  if (auto number = IntegerIn(value, min, max)) return *number;
  return Fail(StateError(what, "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
                                   value.dump()));
}

Error JournalError(const nlohmann::json& entry, const std::string& expected) {
  std::string text = entry.dump();
  if (text.size() > 160) text = text.substr(0, 150) + "...";  // a snapshot's entry holds a million nodes
  return StateError("journal entry " + text, expected);
}

Result<std::vector<NodeId>> StateIds(const nlohmann::json& value, const std::string& what) {
  if (!value.is_array()) return Fail(StateError(what, "an array of node ids, got " + value.dump()));
  std::vector<NodeId> ids;
  ids.reserve(value.size());
  for (const auto& item : value) {
    auto id = StateInteger(item, what + "[]", std::numeric_limits<NodeId>::min(),
                           std::numeric_limits<NodeId>::max());
    if (!id) return Fail(id.error());
    ids.push_back(*id);
  }
  return ids;
}

}  // namespace kestrel::strategies
