#include "search/strategies/strategy.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "search/strategies/strategies.h"

namespace kestrel {

nlohmann::json Strategy::SaveState() const {
  std::vector<NodeId> exhausted(exhausted_.begin(), exhausted_.end());
  std::sort(exhausted.begin(), exhausted.end());
  return {{"exhausted", exhausted}};
}

Status Strategy::RestoreState(const nlohmann::json& state) { return RestoreExhausted(state, {}); }

Status Strategy::RestoreExhausted(const nlohmann::json& state, const std::vector<std::string>& own_fields) {
  if (!state.is_object()) return Fail(strategies::StateError("the document", "an object, got " + state.dump()));
  for (const auto& [key, value] : state.items()) {
    if (key != "exhausted" && std::find(own_fields.begin(), own_fields.end(), key) == own_fields.end()) {
      return Fail(strategies::StateError(key, "no such field for this strategy (saved by another strategy?)"));
    }
  }
  auto field = strategies::StateField(state, "exhausted");
  if (!field) return Fail(field.error());
  auto ids = strategies::StateIds(**field, "exhausted");
  if (!ids) return Fail(ids.error());
  exhausted_ = std::unordered_set<NodeId>(ids->begin(), ids->end());
  return {};
}

std::vector<NodeId> Strategy::Expandable(const SearchGraph& graph) const {
  std::vector<NodeId> nodes;
  for (NodeId id : graph.Nodes()) {
    const GraphNode& node = graph.Node(id);
    if (node.status == NodeStatus::kMeasured && node.speedup && !IsExhausted(id)) nodes.push_back(id);
  }
  return nodes;
}

const std::vector<std::string>& StrategyNames() {
  static const std::vector<std::string> names = {"graph-ucb", "beam", "greedy", "islands", "random", "model", "portfolio"};
  return names;
}

Result<std::unique_ptr<Strategy>> MakeStrategy(const StrategyConfig& config) {
  if (config.name == "graph-ucb") return strategies::MakeGraphUcb(config);
  if (config.name == "beam") return strategies::MakeBeam(config);
  if (config.name == "greedy") return strategies::MakeGreedy();
  if (config.name == "islands") return strategies::MakeIslands(config);
  if (config.name == "random") return strategies::MakeRandom();
  if (config.name == "model") return strategies::MakeLearning(config, false);
  if (config.name == "portfolio") return strategies::MakeLearning(config, true);
  std::string names;
  for (const std::string& name : StrategyNames()) names += (names.empty() ? "" : ", ") + name;
  return Fail(Error::InvalidArgument("strategy '" + config.name + "': expected one of " + names));
}

}  // namespace kestrel
