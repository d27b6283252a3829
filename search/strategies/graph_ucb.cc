// graph-ucb (search/strategies/strategy.h, docs/STRATEGIES.md): UCB over the graph's
// expandable nodes, with the best speedup of each node's subtree in the
// exploit term, kept incrementally by a UcbIndex. The index is derived from
// the graph, so the saved state is the exhausted set alone.

#include <nlohmann/json.hpp>

#include "search/strategies/strategies.h"
#include "search/strategies/ucb_index.h"

namespace kestrel::strategies {
namespace {

class GraphUcb final : public Strategy {
 public:
  explicit GraphUcb(const StrategyConfig& config) : index_({config.exploration, config.subtree_weight}) {}

  std::optional<NodeId> Select(const SearchGraph& graph, std::mt19937_64& rng) override {
    return index_.Select(graph, [this](NodeId id) { return IsExhausted(id); }, rng);
  }


 protected:
  void Exhausted(NodeId id) override { index_.Drop(id); }
  void Reindex() override { index_.Reset(); }

 private:
  UcbIndex index_;
};

}  // namespace

std::unique_ptr<Strategy> MakeGraphUcb(const StrategyConfig& config) { return std::make_unique<GraphUcb>(config); }

}  // namespace kestrel::strategies
