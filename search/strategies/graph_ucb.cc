// graph-ucb (search/strategies/strategy.h, docs/STRATEGIES.md): UCB over the graph's
// expandable nodes, with the best speedup of each node's subtree in the
// exploit term. Its subtree cache is derived from the graph, so its saved
// state is the exhausted set alone.

#include "search/strategies/strategies.h"

namespace kestrel::strategies {
namespace {

class GraphUcb final : public Strategy {
 public:
  explicit GraphUcb(const StrategyConfig& config) : weights_{config.exploration, config.subtree_weight} {}

  std::optional<NodeId> Select(const SearchGraph& graph, std::mt19937_64& rng) override {
    const auto nodes = Expandable(graph);
    if (nodes.empty()) return std::nullopt;
    subtree_.Update(graph);
    return PickByUcb(graph, nodes, subtree_, weights_, rng);
  }

 private:
  UcbWeights weights_;
  SubtreeBest subtree_;
};

}  // namespace

std::unique_ptr<Strategy> MakeGraphUcb(const StrategyConfig& config) { return std::make_unique<GraphUcb>(config); }

}  // namespace kestrel::strategies
