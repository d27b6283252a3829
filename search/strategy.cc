#include "search/strategy.h"

#include <cmath>

namespace kestrel {
namespace {

class GraphUcb final : public Strategy {
 public:
  explicit GraphUcb(double exploration) : exploration_(exploration) {}

  std::optional<NodeId> Select(const SearchGraph& graph, std::mt19937_64& rng) override {
    const auto nodes = Expandable(graph);
    if (nodes.empty()) return std::nullopt;
    double best_speedup = 0;
    double total_expansions = 0;
    for (NodeId id : nodes) {
      best_speedup = std::max(best_speedup, *graph.Node(id).speedup);
      total_expansions += graph.Node(id).expansions;
    }
    std::uniform_real_distribution<double> tie(0.0, 1e-9);
    std::optional<NodeId> chosen;
    double chosen_score = -1;
    for (NodeId id : nodes) {
      const GraphNode& node = graph.Node(id);
      const double exploit = best_speedup > 0 ? *node.speedup / best_speedup : 0.0;
      const double explore = std::sqrt(std::log(1.0 + total_expansions) / (1.0 + node.expansions));
      const double score = exploit + exploration_ * explore + tie(rng);
      if (score > chosen_score) {
        chosen_score = score;
        chosen = id;
      }
    }
    return chosen;
  }

 private:
  double exploration_;
};

class Greedy final : public Strategy {
 public:
  std::optional<NodeId> Select(const SearchGraph& graph, std::mt19937_64& /*rng*/) override {
    std::optional<NodeId> chosen;
    for (NodeId id : Expandable(graph)) {
      if (!chosen || *graph.Node(id).speedup > *graph.Node(*chosen).speedup) chosen = id;
    }
    return chosen;
  }
};

class Random final : public Strategy {
 public:
  std::optional<NodeId> Select(const SearchGraph& graph, std::mt19937_64& rng) override {
    const auto nodes = Expandable(graph);
    if (nodes.empty()) return std::nullopt;
    std::uniform_int_distribution<std::size_t> pick(0, nodes.size() - 1);
    return nodes[pick(rng)];
  }
};

}  // namespace

std::vector<NodeId> Strategy::Expandable(const SearchGraph& graph) const {
  std::vector<NodeId> nodes;
  for (NodeId id : graph.Nodes()) {
    const GraphNode& node = graph.Node(id);
    if (node.status == NodeStatus::kMeasured && node.speedup && !IsExhausted(id)) nodes.push_back(id);
  }
  return nodes;
}

Result<std::unique_ptr<Strategy>> MakeStrategy(const StrategyConfig& config) {
  if (config.name == "graph-ucb") return std::make_unique<GraphUcb>(config.exploration);
  if (config.name == "greedy") return std::make_unique<Greedy>();
  if (config.name == "random") return std::make_unique<Random>();
  return Fail(Error::InvalidArgument("strategy '" + config.name + "': expected one of graph-ucb, greedy, random"));
}

}  // namespace kestrel
