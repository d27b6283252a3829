#include "search/knobs/parzen_estimator.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "search/knobs/knob_space.h"

namespace kestrel {

ParzenEstimator::ParzenEstimator(std::vector<std::size_t> values) : values_(std::move(values)) {
  for (std::size_t count : values_) counts_.emplace_back(std::max<std::size_t>(1, count), 0);
}

void ParzenEstimator::Add(NodeId node, const std::string& key, float speedup) {
  if (key.size() != 2 * values_.size()) return;
  for (std::size_t k = 0; k < values_.size(); ++k) {
    const std::size_t index = KnobSpace::IndexAt(key, k);
    if (index < counts_[k].size()) ++counts_[k][index];
  }
  ++observations_;
  if (!(speedup > 0)) return;
  // Fastest first; a tie puts the lower node id first, whatever order results arrive in.
  const auto ahead = [](const Good& a, const Good& b) { return a.speedup != b.speedup ? a.speedup > b.speedup : a.node < b.node; };
  Good entry{speedup, node, key};
  if (best_.size() == kMostGood && !ahead(entry, best_.back())) return;
  best_.insert(std::upper_bound(best_.begin(), best_.end(), entry, ahead), std::move(entry));
  if (best_.size() > kMostGood) best_.pop_back();
}

std::size_t ParzenEstimator::GoodCount() const {
  // ceil(kGoodShare * observations), in integers: one in five.
  static_assert(kGoodShare == 0.2);
  return std::min({(observations_ + 4) / 5, kMostGood, best_.size()});
}

std::vector<std::vector<double>> ParzenEstimator::Weights(bool good) const {
  std::vector<std::vector<double>> weights(values_.size());
  std::vector<std::vector<std::uint32_t>> in_good(values_.size());
  for (std::size_t k = 0; k < values_.size(); ++k) in_good[k].assign(counts_[k].size(), 0);
  const std::size_t good_count = GoodCount();
  for (std::size_t i = 0; i < good_count; ++i) {
    for (std::size_t k = 0; k < values_.size(); ++k) {
      const std::size_t index = KnobSpace::IndexAt(best_[i].key, k);
      if (index < in_good[k].size()) ++in_good[k][index];
    }
  }
  for (std::size_t k = 0; k < values_.size(); ++k) {
    for (std::size_t v = 0; v < counts_[k].size(); ++v) {
      weights[k].push_back(1.0 + (good ? in_good[k][v] : counts_[k][v] - in_good[k][v]));
    }
  }
  return weights;
}

namespace {

double LogOdds(const std::vector<std::vector<double>>& l, const std::vector<std::vector<double>>& g,
               const std::vector<double>& l_sums, const std::vector<double>& g_sums, const std::string& key) {
  double score = 0;
  for (std::size_t k = 0; k < l.size(); ++k) {
    const std::size_t v = std::min(KnobSpace::IndexAt(key, k), l[k].size() - 1);
    score += std::log(l[k][v] / l_sums[k]) - std::log(g[k][v] / g_sums[k]);
  }
  return score;
}

std::vector<double> Sums(const std::vector<std::vector<double>>& weights) {
  std::vector<double> sums;
  for (const auto& knob : weights) sums.push_back(std::accumulate(knob.begin(), knob.end(), 0.0));
  return sums;
}

}  // namespace

std::vector<ParzenEstimator::Draw> ParzenEstimator::Sample(std::size_t count, std::mt19937_64& rng) const {
  const auto l = Weights(true), g = Weights(false);
  const auto l_sums = Sums(l), g_sums = Sums(g);
  std::vector<std::discrete_distribution<std::size_t>> picks;
  for (const auto& knob : l) picks.emplace_back(knob.begin(), knob.end());
  std::vector<Draw> draws;
  draws.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    std::string key(2 * values_.size(), '\0');
    for (std::size_t k = 0; k < values_.size(); ++k) KnobSpace::SetIndex(key, k, picks[k](rng));
    const double score = LogOdds(l, g, l_sums, g_sums, key);
    draws.push_back({std::move(key), score});
  }
  return draws;
}

double ParzenEstimator::Score(const std::string& key) const {
  const auto l = Weights(true), g = Weights(false);
  return LogOdds(l, g, Sums(l), Sums(g), key);
}

}  // namespace kestrel
