#pragma once
// DirectionBandit: which direction an LLM mutation takes when no analysis
// says what to fix (issue 18, "directions that learn"). UCB1 over the
// direction categories: each arm keeps its tries and the sum of its rewards,
// a child's improvement over its parent, clamped to [-1, 1], and -1 for a
// child that failed (DirectionReward). Arms never tried go first, drawn from
// the expansion's generator; after that the highest
//   mean(arm) + c * sqrt(2 ln(tries) / tries(arm))
// wins, ties drawn from the generator. Choosing changes nothing: only
// credits do, so the state saved with a result is the whole state and a
// resumed run chooses what the run would have chosen.
//
// Thread-safety: none; the LLM mutator guards it.

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/error.h"
#include "core/outcome.h"

namespace kestrel {

class DirectionBandit {
 public:
  explicit DirectionBandit(std::vector<std::string> arms, double exploration = 0.5);

  const std::vector<std::string>& arms() const { return arms_; }
  // The index of the arm to try next.
  std::size_t Choose(std::mt19937_64& rng) const;
  // A child made in direction `arm` earned `reward`; an unknown arm is ignored.
  void Credit(const std::string& arm, double reward);
  std::int64_t Tries(std::size_t arm) const { return stats_[arm].tries; }
  double Mean(std::size_t arm) const;

  // {"ARM": [tries, reward sum], ...}
  nlohmann::json Save() const;
  // Refuses (Corruption) a malformed document and then changes nothing; arms
  // it does not know are dropped (the direction list changed).
  Status Restore(const nlohmann::json& saved);

 private:
  struct Stats {
    std::int64_t tries = 0;
    double reward = 0.0;
  };
  std::vector<std::string> arms_;
  std::vector<Stats> stats_;
  double exploration_;
};

// The reward of a child: its speedup over its parent's, minus one, clamped to
// [-1, 1]; -1 when it failed (it did not build, was wrong, crashed, ...); 0
// when either speedup is unknown.
double DirectionReward(Outcome outcome, std::optional<double> speedup, std::optional<double> parent_speedup);

}  // namespace kestrel
