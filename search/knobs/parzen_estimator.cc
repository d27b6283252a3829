#include "search/knobs/parzen_estimator.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "search/knobs/knob_space.h"

namespace kestrel {

ParzenEstimator::ParzenEstimator(std::vector<std::size_t> values) {
  for (std::size_t count : values) counts_.emplace_back(std::max<std::size_t>(1, count), 0);
}

void ParzenEstimator::Add(NodeId node, const std::string& key, float speedup) {
  if (key.size() != 2 * counts_.size()) return;
  for (std::size_t k = 0; k < counts_.size(); ++k) {
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

ParzenEstimator::Weights ParzenEstimator::Split() const {
  Weights weights;
  for (const auto& knob : counts_) {
    weights.l.emplace_back(knob.size(), 1.0);
    weights.g.emplace_back(knob.begin(), knob.end());
    for (double& count : weights.g.back()) count += 1.0;
  }
  const std::size_t good = std::min({(observations_ + kGoodEvery - 1) / kGoodEvery, kMostGood, best_.size()});
  for (std::size_t i = 0; i < good; ++i) {
    for (std::size_t k = 0; k < counts_.size(); ++k) {
      const std::size_t index = KnobSpace::IndexAt(best_[i].key, k);
      if (index >= counts_[k].size()) continue;
      weights.l[k][index] += 1.0;  // among the good,
      weights.g[k][index] -= 1.0;  // so not among the rest
    }
  }
  return weights;
}

namespace {

std::vector<double> Sums(const std::vector<std::vector<double>>& weights) {
  std::vector<double> sums;
  for (const auto& knob : weights) sums.push_back(std::accumulate(knob.begin(), knob.end(), 0.0));
  return sums;
}

// log l(x) - log g(x), each knob's weights over their sum.
struct LogOdds {
  const std::vector<std::vector<double>>& l;
  const std::vector<std::vector<double>>& g;
  std::vector<double> l_sums = Sums(l), g_sums = Sums(g);

  double operator()(const std::string& key) const {
    double score = 0;
    for (std::size_t k = 0; k < l.size(); ++k) {
      const std::size_t v = std::min(KnobSpace::IndexAt(key, k), l[k].size() - 1);
      score += std::log(l[k][v] / l_sums[k]) - std::log(g[k][v] / g_sums[k]);
    }
    return score;
  }
};

}  // namespace

std::vector<ParzenEstimator::Draw> ParzenEstimator::Sample(std::size_t count, std::mt19937_64& rng) const {
  const Weights weights = Split();
  const LogOdds odds{weights.l, weights.g};
  std::vector<std::discrete_distribution<std::size_t>> picks;
  for (const auto& knob : weights.l) picks.emplace_back(knob.begin(), knob.end());
  std::vector<Draw> draws;
  draws.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    std::string key(2 * counts_.size(), '\0');
    for (std::size_t k = 0; k < counts_.size(); ++k) KnobSpace::SetIndex(key, k, picks[k](rng));
    const double score = odds(key);
    draws.push_back({std::move(key), score});
  }
  return draws;
}

double ParzenEstimator::Score(const std::string& key) const {
  const Weights weights = Split();
  return LogOdds{weights.l, weights.g}(key);
}

}  // namespace kestrel
