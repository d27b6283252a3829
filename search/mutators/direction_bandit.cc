#include "search/mutators/direction_bandit.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

namespace kestrel {

DirectionBandit::DirectionBandit(std::vector<std::string> arms, double exploration)
    : arms_(std::move(arms)), stats_(arms_.size()), exploration_(exploration) {}

double DirectionBandit::Mean(std::size_t arm) const {
  const Stats& stats = stats_[arm];
  return stats.tries == 0 ? 0.0 : stats.reward / static_cast<double>(stats.tries);
}

std::size_t DirectionBandit::Choose(std::mt19937_64& rng) const {
  std::vector<std::size_t> best;
  std::int64_t total = 0;
  for (const Stats& stats : stats_) total += stats.tries;
  for (std::size_t arm = 0; arm < arms_.size(); ++arm) {
    if (stats_[arm].tries == 0) best.push_back(arm);
  }
  if (best.empty()) {
    double best_score = -INFINITY;
    for (std::size_t arm = 0; arm < arms_.size(); ++arm) {
      const double score = Mean(arm) + exploration_ * std::sqrt(2.0 * std::log(static_cast<double>(total)) /
                                                                static_cast<double>(stats_[arm].tries));
      if (score > best_score + 1e-12) {
        best_score = score;
        best.assign(1, arm);
      } else if (std::abs(score - best_score) <= 1e-12) {
        best.push_back(arm);
      }
    }
  }
  return best[std::uniform_int_distribution<std::size_t>(0, best.size() - 1)(rng)];
}

void DirectionBandit::Credit(const std::string& arm, double reward) {
  const auto found = std::find(arms_.begin(), arms_.end(), arm);
  if (found == arms_.end()) return;
  Stats& stats = stats_[static_cast<std::size_t>(found - arms_.begin())];
  ++stats.tries;
  stats.reward += std::clamp(reward, -1.0, 1.0);
}

nlohmann::json DirectionBandit::Save() const {
  nlohmann::json saved = nlohmann::json::object();
  for (std::size_t arm = 0; arm < arms_.size(); ++arm) {
    if (stats_[arm].tries > 0) saved[arms_[arm]] = {stats_[arm].tries, stats_[arm].reward};
  }
  return saved;
}

Status DirectionBandit::Restore(const nlohmann::json& saved) {
  if (!saved.is_object()) return Fail(Error::Corruption("the direction bandit's state is not an object"));
  std::vector<Stats> restored(arms_.size());
  for (const auto& [arm, value] : saved.items()) {
    if (!value.is_array() || value.size() != 2 || !value[0].is_number_integer() || !value[1].is_number() ||
        value[0].get<std::int64_t>() < 0) {
      return Fail(Error::Corruption("the direction bandit's state for '" + arm + "' is not [tries, reward]"));
    }
    const auto found = std::find(arms_.begin(), arms_.end(), arm);
    if (found == arms_.end()) continue;
    restored[static_cast<std::size_t>(found - arms_.begin())] = {value[0].get<std::int64_t>(), value[1].get<double>()};
  }
  stats_ = std::move(restored);
  return {};
}

double DirectionReward(Outcome outcome, std::optional<double> speedup, std::optional<double> parent_speedup) {
  if (outcome != Outcome::kMeasured) return -1.0;
  if (!speedup || !parent_speedup || *parent_speedup <= 0) return 0.0;
  return std::clamp(*speedup / *parent_speedup - 1.0, -1.0, 1.0);
}

}  // namespace kestrel
