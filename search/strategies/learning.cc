// model and portfolio (search/strategies/strategy.h): graph-ucb chooses the
// parent (a UcbIndex); the KnobAdvisor they own chooses the variant. Their saved state is
// the exhausted set and the advisor's (the portfolio's bandit window).

#include <nlohmann/json.hpp>

#include "search/knobs/knob_advisor.h"
#include "search/strategies/strategies.h"
#include "search/strategies/ucb_index.h"

namespace kestrel::strategies {
namespace {

class Learning final : public Strategy {
 public:
  Learning(const StrategyConfig& config, bool portfolio)
      : index_({config.exploration, config.subtree_weight}),
        mode_(portfolio ? KnobAdvisor::Mode::kPortfolio : KnobAdvisor::Mode::kModel),
        advisor_(std::make_shared<KnobAdvisor>(mode_)) {}

  std::optional<NodeId> Select(const SearchGraph& graph, std::mt19937_64& rng) override {
    return index_.Select(graph, [this](NodeId id) { return IsExhausted(id); }, rng);
  }

  std::shared_ptr<KnobAdvisor> Advisor() const override { return advisor_; }

  void SaveOwn(nlohmann::json& state, StateParts /*parts*/) const override {
    state["advisor"] = advisor_->Save();
  }

  Status RestoreState(const nlohmann::json& state) override {
    // Tried on a scratch advisor first, so that a refusal changes nothing.
    const bool has_advisor = state.is_object() && state.contains("advisor");
    if (has_advisor) {
      if (auto valid = KnobAdvisor(mode_).Restore(state.at("advisor")); !valid) {
        return Fail(StateError("advisor", valid.error().message()));
      }
    }
    if (auto restored = RestoreExhausted(state, {"advisor"}); !restored) return restored;
    if (has_advisor) return advisor_->Restore(state.at("advisor"));
    return {};
  }

 protected:
  void Exhausted(NodeId id) override { index_.Drop(id); }
  void Reindex() override { index_.Reset(); }

 private:
  UcbIndex index_;
  KnobAdvisor::Mode mode_;
  std::shared_ptr<KnobAdvisor> advisor_;
};

}  // namespace

std::unique_ptr<Strategy> MakeLearning(const StrategyConfig& config, bool portfolio) {
  return std::make_unique<Learning>(config, portfolio);
}

}  // namespace kestrel::strategies
