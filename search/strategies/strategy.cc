#include "search/strategies/strategy.h"

#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>

#include "search/strategies/strategies.h"

namespace kestrel {

Strategy::Strategy() : pending_(std::make_unique<nlohmann::json>(nlohmann::json::array())) {}
Strategy::~Strategy() = default;

void Strategy::MarkExhausted(NodeId id) {
  if (!exhausted_.insert(id).second) return;
  Journal({"exhausted", id});
  Exhausted(id);
}

void Strategy::Revive(NodeId id) {
  if (exhausted_.erase(id) == 0) return;
  Journal({"revived", id});
  Reindex();
}

void Strategy::Journal(nlohmann::json entry) { pending_->push_back(std::move(entry)); }

void Strategy::JournalStored() { *pending_ = nlohmann::json::array(); }

nlohmann::json Strategy::JournalSnapshot() const {
  std::vector<NodeId> exhausted(exhausted_.begin(), exhausted_.end());
  std::sort(exhausted.begin(), exhausted.end());
  nlohmann::json entries = nlohmann::json::array();
  if (!exhausted.empty()) entries.push_back({"exhausted_nodes", exhausted});
  SnapshotOwn(entries);
  return entries;
}

nlohmann::json Strategy::SaveState(StateParts parts) const {
  nlohmann::json state = nlohmann::json::object();
  if (parts == StateParts::kAll) {
    std::vector<NodeId> exhausted(exhausted_.begin(), exhausted_.end());
    std::sort(exhausted.begin(), exhausted.end());
    state["exhausted"] = exhausted;
  }
  SaveOwn(state, parts);
  return state;
}

Status Strategy::RestoreState(const nlohmann::json& state) { return RestoreExhausted(state, {}); }

Status Strategy::RestoreExhausted(const nlohmann::json& state, const std::vector<std::string>& own_fields) {
  if (!state.is_object()) return Fail(strategies::StateError("the document", "an object, got " + state.dump()));
  for (const auto& [key, value] : state.items()) {
    if (key != "exhausted" && std::find(own_fields.begin(), own_fields.end(), key) == own_fields.end()) {
      return Fail(strategies::StateError(key, "no such field for this strategy (saved by another strategy?)"));
    }
  }
  std::vector<NodeId> ids;
  if (state.contains("exhausted")) {
    auto read = strategies::StateIds(state.at("exhausted"), "exhausted");
    if (!read) return Fail(read.error());
    ids = std::move(*read);
  }
  exhausted_ = std::unordered_set<NodeId>(ids.begin(), ids.end());
  // A state saved whole: its exhausted set goes on as journal entries.
  *pending_ = nlohmann::json::array();
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (NodeId id : ids) Journal({"exhausted", id});
  Reindex();
  return {};
}

Status Strategy::ReplayEntry(const nlohmann::json& entry, bool /*apply*/) {
  return Fail(strategies::JournalError(entry, "an entry this strategy keeps (saved by another strategy?)"));
}

Status Strategy::Replay(const nlohmann::json& entries) {
  if (!entries.is_array()) return Fail(strategies::StateError("journal", "an array of entries, got " + entries.dump()));
  constexpr NodeId kMin = std::numeric_limits<NodeId>::min(), kMax = std::numeric_limits<NodeId>::max();
  // Checked whole first, so that a refusal changes nothing.
  for (bool apply : {false, true}) {
    for (const nlohmann::json& entry : entries) {
      const std::string* kind = entry.is_array() && entry.size() == 2 && entry[0].is_string()
                                    ? entry[0].get_ptr<const std::string*>()
                                    : nullptr;
      if (kind != nullptr && (*kind == "exhausted" || *kind == "revived")) {
        const auto node = strategies::IntegerIn(entry[1], kMin, kMax);
        if (!node) return Fail(strategies::JournalError(entry, "[\"" + *kind + "\", node id]"));
        if (!apply) continue;
        if (*kind == "revived") {
          exhausted_.erase(*node);
        } else if (exhausted_.insert(*node).second) {
          Exhausted(*node);
        }
      } else if (kind != nullptr && *kind == "exhausted_nodes") {  // a snapshot's: every exhausted node
        if (!entry[1].is_array()) return Fail(strategies::JournalError(entry, "[\"exhausted_nodes\", [node ids]]"));
        if (apply) exhausted_.reserve(exhausted_.size() + entry[1].size());
        for (const nlohmann::json& value : entry[1]) {
          const auto node = strategies::IntegerIn(value, kMin, kMax);
          if (!node) return Fail(strategies::JournalError(entry, "[\"exhausted_nodes\", [node ids]]"));
          if (apply && exhausted_.insert(*node).second) Exhausted(*node);
        }
      } else if (auto done = ReplayEntry(entry, apply); !done) {
        return done;
      }
    }
  }
  if (!entries.empty()) Reindex();
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
