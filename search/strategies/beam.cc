// beam (search/strategies/strategy.h, docs/STRATEGIES.md): generations over a fixed
// beam, the way MaxKernel's graph search keeps its best kernels.
//
//   generation g: B = the top W expandable nodes by speedup (ties: lower id),
//                 fixed when g starts; each member gets k expansions.
//   Select:       the next member of B, in turns from the best, that has
//                 expansions left and is not exhausted; when none has, g + 1
//                 starts from the graph as it is then (children measured
//                 during g compete with their parents).
//
// The rng is not used: beam is deterministic given the graph.

#include <limits>

#include <nlohmann/json.hpp>

#include "search/strategies/strategies.h"

namespace kestrel::strategies {
namespace {

class Beam final : public Strategy {
 public:
  explicit Beam(const StrategyConfig& config) : width_(config.beam_width), keep_(config.keep_factor) {}

  std::optional<NodeId> Select(const SearchGraph& graph, std::mt19937_64& /*rng*/) override {
    if (auto chosen = NextInGeneration(graph)) return chosen;
    if (!StartGeneration(graph)) return std::nullopt;
    return NextInGeneration(graph);
  }

  void SaveOwn(nlohmann::json& state, StateParts /*parts*/) const override {
    state["generation"] = generation_;
    state["members"] = members_;
    state["quota"] = quota_;
    state["cursor"] = cursor_;
  }

  Status RestoreState(const nlohmann::json& state) override {
    if (!state.is_object()) return Strategy::RestoreState(state);  // refuses it
    auto generation = Read(state, "generation", [](const nlohmann::json& value) {
      return StateInteger(value, "generation", 0, std::numeric_limits<std::int64_t>::max());
    });
    if (!generation) return Fail(generation.error());
    auto members = Read(state, "members", [](const nlohmann::json& value) { return StateIds(value, "members"); });
    if (!members) return Fail(members.error());
    auto quota_field = StateField(state, "quota");
    if (!quota_field) return Fail(quota_field.error());
    const nlohmann::json& quota_json = **quota_field;
    if (!quota_json.is_array() || quota_json.size() != members->size()) {
      return Fail(StateError("quota", "an array with one count per member, got " + quota_json.dump()));
    }
    std::vector<int> quota;
    for (const auto& value : quota_json) {
      auto count = StateInteger(value, "quota[]", 0, keep_);
      if (!count) return Fail(count.error());
      quota.push_back(static_cast<int>(*count));
    }
    const auto last = static_cast<std::int64_t>(std::max<std::size_t>(members->size(), 1) - 1);
    auto cursor = Read(state, "cursor", [last](const nlohmann::json& value) {
      return StateInteger(value, "cursor", 0, last);
    });
    if (!cursor) return Fail(cursor.error());
    if (members->size() > static_cast<std::size_t>(width_)) {
      return Fail(StateError("members", "at most beam_width (" + std::to_string(width_) + ") nodes"));
    }
    if (auto status = RestoreExhausted(state, {"generation", "members", "quota", "cursor"}); !status) return status;
    generation_ = *generation;
    members_ = std::move(*members);
    quota_ = std::move(quota);
    cursor_ = static_cast<std::size_t>(*cursor);
    return {};
  }

 private:
  template <class Reader>
  static auto Read(const nlohmann::json& state, const std::string& field, Reader reader)
      -> decltype(reader(state)) {
    auto value = StateField(state, field);
    if (!value) return Fail(value.error());
    return reader(**value);
  }

  // The next member with expansions left, in turns; nullopt when the
  // generation is spent (or there is none yet).
  std::optional<NodeId> NextInGeneration(const SearchGraph& graph) {
    for (std::size_t step = 0; step < members_.size(); ++step) {
      const std::size_t index = (cursor_ + step) % members_.size();
      const NodeId id = members_[index];
      if (quota_[index] == 0 || IsExhausted(id) || !graph.Contains(id)) continue;
      if (graph.Node(id).status != NodeStatus::kMeasured) continue;
      --quota_[index];
      cursor_ = (index + 1) % members_.size();
      return id;
    }
    return std::nullopt;
  }

  // Fixes the next generation's beam; false when nothing is expandable.
  bool StartGeneration(const SearchGraph& graph) {
    // The graph's ranking is this order already: the first W that are not
    // exhausted, without listing every expandable node.
    std::vector<NodeId> nodes;
    graph.VisitRanked([&](NodeId id) {
      if (!IsExhausted(id)) nodes.push_back(id);
      return nodes.size() < static_cast<std::size_t>(width_);
    });
    if (nodes.empty()) return false;
    members_ = std::move(nodes);
    quota_.assign(members_.size(), keep_);
    cursor_ = 0;
    ++generation_;
    return true;
  }

  int width_;
  int keep_;
  std::int64_t generation_ = 0;  // generations started
  std::vector<NodeId> members_;  // the beam, best first
  std::vector<int> quota_;       // expansions left this generation, per member
  std::size_t cursor_ = 0;       // the member whose turn is next
};

}  // namespace

std::unique_ptr<Strategy> MakeBeam(const StrategyConfig& config) { return std::make_unique<Beam>(config); }

}  // namespace kestrel::strategies
