#pragma once
// ParzenEstimator: which knob values the best measured configurations share,
// and a draw from them (the tree-structured Parzen estimator that Hyperopt
// and Optuna sample with; docs/STRATEGIES.md, "model"). The observations
// split into the good (the fastest one in kGoodEvery of them, at most kMostGood)
// and the rest; per knob, l is the distribution of values among the good and
// g among the rest, each value with one pseudo-observation. A draw takes each
// knob's value from l independently; its score is log l(x) - log g(x), the
// odds that it belongs with the good.
//
// It reads knob values the way the cost model's trees cannot on little data:
// one knob at a time, over every observation. Where a space's best is a
// narrow interaction of values that are each good on their own (cumsum_blocked:
// one lane, single accumulation, four rows), draws from l land in it far more
// often than uniform draws do.
//
// Its state follows from the observations alone (the good are ordered by
// speedup, then node id), so a resumed run that observes the stored graph
// draws from the same distributions. Add costs O(knobs + kMostGood), Sample
// O(knobs x values + kMostGood x knobs) and O(knobs) a draw, whatever the
// number of observations.
//
// Thread-safety: none; KnobAdvisor guards it.

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "graph/search_graph.h"

namespace kestrel {

class ParzenEstimator {
 public:
  static constexpr std::size_t kGoodEvery = 5;  // the fastest fifth, rounded up
  static constexpr std::size_t kMostGood = 25;

  // `values[k]`: how many values knob k declares. Keys are KnobSpace keys.
  explicit ParzenEstimator(std::vector<std::size_t> values);

  // One observation: a configuration's key and its speedup (0: failed, never good).
  void Add(NodeId node, const std::string& key, float speedup);
  std::size_t Observations() const { return observations_; }

  struct Draw {
    std::string key;
    double score;  // log l(x) - log g(x)
  };
  // `count` configurations drawn from the good configurations' marginals
  // (repeats possible).
  std::vector<Draw> Sample(std::size_t count, std::mt19937_64& rng) const;
  // The score of any configuration.
  double Score(const std::string& key) const;

 private:
  struct Good {
    float speedup;
    NodeId node;
    std::string key;
  };
  // Per knob and value: l's and g's weights (pseudo-observation included).
  struct Weights {
    std::vector<std::vector<double>> l, g;
  };
  Weights Split() const;

  std::vector<std::vector<std::uint32_t>> counts_;  // per knob and value, over every observation
  std::vector<Good> best_;                           // fastest first, at most kMostGood
  std::size_t observations_ = 0;
};

}  // namespace kestrel
