// greedy and random: the two strategies without state of their own.

#include "search/strategies/strategies.h"

namespace kestrel::strategies {
namespace {

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

std::unique_ptr<Strategy> MakeGreedy() { return std::make_unique<Greedy>(); }
std::unique_ptr<Strategy> MakeRandom() { return std::make_unique<Random>(); }

}  // namespace kestrel::strategies
