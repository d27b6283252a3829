#pragma once
// The strategies behind MakeStrategy (search/strategies/strategy.h), one file each, and
// what they share: the graph-ucb score, the subtree-best cache and readers
// for saved state. Private to search/.

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/error.h"
#include "graph/search_graph.h"
#include "search/run_config.h"
#include "search/strategies/strategy.h"

namespace kestrel::strategies {

std::unique_ptr<Strategy> MakeGraphUcb(const StrategyConfig& config);
std::unique_ptr<Strategy> MakeBeam(const StrategyConfig& config);
std::unique_ptr<Strategy> MakeGreedy();
std::unique_ptr<Strategy> MakeIslands(const StrategyConfig& config);
std::unique_ptr<Strategy> MakeRandom();
// model (`portfolio` false) and portfolio.
std::unique_ptr<Strategy> MakeLearning(const StrategyConfig& config, bool portfolio);

// v(n): the best measured speedup in each node's subtree (the node and its
// descendants). A node's ancestors are its Lineage: the engine gives each
// node at most one derive or fix parent, and "duplicate" edges (a
// re-proposal) and "same_code" edges (a twin) do not make a descendant. Kept incrementally: Update looks at
// the nodes added since its last call and at those it saw unfinished
// (proposed or built), and folds each newly measured one in once, raising v
// along its O(depth) lineage; the rest of the graph is not visited. A
// node's final status never changes within a run, so nothing else can.
// It serves one graph (a strategy's): v is kept by the graph's insertion
// index, in an array.
class SubtreeBest {
 public:
  void Update(const SearchGraph& graph);
  // 0 when nothing in the subtree is measured (or the node is unknown, or
  // no graph was read yet).
  double Of(NodeId id) const;
  // The first read of a graph, in one pass: v of every node, children before
  // parents (a node is added after its first parent, so in reverse
  // insertion order). Update then continues from there.
  void Build(const SearchGraph& graph);
  // Raises v along the lineage of a node measured at `speedup`, telling
  // `raised` (if any) of each node whose v rose.
  void Fold(const SearchGraph& graph, NodeId id, double speedup,
            const std::function<void(NodeId, double)>& raised = nullptr);

 private:
  double& At(const SearchGraph& graph, NodeId id);

  const SearchGraph* graph_ = nullptr;  // the graph read last
  std::size_t seen_ = 0;             // nodes looked at, a prefix of the insertion order
  std::vector<NodeId> unfinished_;   // seen while proposed or built
  std::vector<double> best_;         // v(n) by insertion index (SearchGraph::IndexOf); 0: none
};

struct UcbWeights {
  double exploration = 1.0;     // c
  double subtree_weight = 0.5;  // 1 - a
};

// The node of `nodes` (expandable, non-empty) with the highest score
//   a * s(n)/s* + (1 - a) * v(n)/s* + c * sqrt(ln(1 + E) / (1 + e(n)))
// where s* = the largest v(n) among `nodes` and E = the sum of their e(n).
// Draws one tie-breaker in [0, 1e-9) per node from `rng`, in order.
NodeId PickByUcb(const SearchGraph& graph, const std::vector<NodeId>& nodes, const SubtreeBest& subtree,
                 const UcbWeights& weights, std::mt19937_64& rng);

// Readers for RestoreState; each refusal is InvalidArgument
// "strategy state: WHAT: expected ...". `what` names the value ("beam.cursor").
Error StateError(const std::string& what, const std::string& expected);
// The field of a state object; a missing field is refused.
Result<const nlohmann::json*> StateField(const nlohmann::json& state, const std::string& field);
Result<std::int64_t> StateInteger(const nlohmann::json& value, const std::string& what, std::int64_t min,
                                  std::int64_t max);
// The same check without a message: nullopt when `value` is not an integer
// in [min, max] (a journal of a million entries is read with it).
std::optional<std::int64_t> IntegerIn(const nlohmann::json& value, std::int64_t min, std::int64_t max);
// A journal entry that is not what it should be: "strategy state: journal
// entry ENTRY: expected EXPECTED" (a long entry cut short).
Error JournalError(const nlohmann::json& entry, const std::string& expected);
// An array of node ids.
Result<std::vector<NodeId>> StateIds(const nlohmann::json& value, const std::string& what);

}  // namespace kestrel::strategies
