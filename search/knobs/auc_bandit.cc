#include "search/knobs/auc_bandit.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

namespace kestrel {

AucBandit::AucBandit(std::vector<std::string> arms, std::size_t window, double exploration)
    : arms_(std::move(arms)), window_(window), exploration_(exploration) {}

double AucBandit::Score(const std::string& arm) const {
  const auto index = static_cast<std::size_t>(std::find(arms_.begin(), arms_.end(), arm) - arms_.begin());
  double weighted = 0;
  std::size_t uses = 0;
  for (const auto& [used, improved] : history_) {
    if (used != index) continue;
    ++uses;
    if (improved) weighted += static_cast<double>(uses);
  }
  if (uses == 0) return INFINITY;
  const double n = static_cast<double>(uses);
  const double auc = weighted / (n * (n + 1) / 2);
  return auc + exploration_ * std::sqrt(2 * std::log(static_cast<double>(history_.size())) / n);
}

const std::string& AucBandit::Choose() const {
  std::size_t best = 0;
  double best_score = -INFINITY;
  for (std::size_t i = 0; i < arms_.size(); ++i) {
    const double score = Score(arms_[i]);
    if (score > best_score) best = i, best_score = score;
  }
  return arms_[best];
}

void AucBandit::Record(const std::string& arm, bool improved) {
  const auto it = std::find(arms_.begin(), arms_.end(), arm);
  if (it == arms_.end()) return;
  history_.emplace_back(static_cast<std::size_t>(it - arms_.begin()), improved);
  while (history_.size() > window_) history_.pop_front();
}

nlohmann::json AucBandit::Save() const {
  nlohmann::json saved = nlohmann::json::array();
  for (const auto& [arm, improved] : history_) saved.push_back({arms_[arm], improved});
  return saved;
}

Status AucBandit::Restore(const nlohmann::json& saved) {
  const auto refuse = [&saved] {
    return Fail(Error::InvalidArgument("bandit history: expected [[technique, improved], ...], got " +
                                       saved.dump().substr(0, 120)));
  };
  if (!saved.is_array()) return refuse();
  std::deque<std::pair<std::size_t, bool>> history;
  for (const nlohmann::json& use : saved) {
    if (!use.is_array() || use.size() != 2 || !use[0].is_string() || !use[1].is_boolean()) return refuse();
    const auto it = std::find(arms_.begin(), arms_.end(), use[0].get<std::string>());
    if (it == arms_.end()) return refuse();
    history.emplace_back(static_cast<std::size_t>(it - arms_.begin()), use[1].get<bool>());
  }
  while (history.size() > window_) history.pop_front();
  history_ = std::move(history);
  return {};
}

}  // namespace kestrel
