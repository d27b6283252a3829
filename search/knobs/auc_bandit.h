#pragma once
// AucBandit: OpenTuner's area-under-the-curve bandit over techniques
// (AUCBanditMetaTechnique). Each use of a technique is remembered with
// whether it improved the best result; over the last `window` uses, a
// technique scores
//   auc(t) + c * sqrt(2 ln(uses) / uses(t))
// where auc(t) weighs its improvements by recency (its i-th use of n counts
// i / (n (n + 1) / 2)), so a technique that improved lately is preferred and
// one that stopped paying off fades. A technique never used in the window is
// tried first (in the order given).
//
// Thread-safety: none; KnobAdvisor guards it.

#include <cstddef>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/error.h"

namespace kestrel {

class AucBandit {
 public:
  AucBandit(std::vector<std::string> arms, std::size_t window = 500, double exploration = 0.05);

  const std::vector<std::string>& arms() const { return arms_; }
  // The arm to use next.
  const std::string& Choose() const;
  // `arm` was used; `improved`: it produced a new best. An unknown arm is ignored.
  void Record(const std::string& arm, bool improved);
  double Score(const std::string& arm) const;

  // The window, oldest first: [[arm, improved], ...].
  nlohmann::json Save() const;
  // Refuses (InvalidArgument) a malformed document or an unknown arm, and then changes nothing.
  Status Restore(const nlohmann::json& saved);

 private:
  std::vector<std::string> arms_;
  std::size_t window_;
  double exploration_;
  std::deque<std::pair<std::size_t, bool>> history_;  // arm index, improved
};

}  // namespace kestrel
