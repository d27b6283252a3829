#include "search/engine/confirmation_rule.h"

#include <algorithm>

namespace kestrel {
namespace {

// The measured speedups of `node` in `round`, after `first`.
std::vector<double> Speedups(std::int64_t node, std::optional<double> first, const Remeasurements& round) {
  std::vector<double> speedups;
  if (first) speedups.push_back(*first);
  for (const auto& [id, measurement] : round) {
    if (id == node && measurement.outcome == Outcome::kMeasured) speedups.push_back(measurement.speedup);
  }
  return speedups;
}

// Re-measurements of `node` in `round` that did not measure.
std::int64_t Failures(std::int64_t node, const Remeasurements& round) {
  return std::count_if(round.begin(), round.end(), [node](const auto& entry) {
    return entry.first == node && entry.second.outcome != Outcome::kMeasured;
  });
}

}  // namespace

double Median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

double Noise(const std::vector<double>& values) {
  if (values.size() < 2) return 0.0;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const double median = Median(values);
  return median > 0 ? (*hi - *lo) / median : 0.0;
}

ConfirmationRecord JudgeRound(std::int64_t challenger, double challenger_speedup, std::int64_t incumbent,
                              double incumbent_speedup, const Remeasurements& round) {
  const std::vector<double> challenger_speedups = Speedups(challenger, challenger_speedup, round);
  const std::vector<double> incumbent_speedups = Speedups(incumbent, incumbent_speedup, round);
  ConfirmationRecord record;
  record.node_id = challenger;
  record.against_id = incumbent;
  record.node_median = Median(challenger_speedups);
  record.against_median = Median(incumbent_speedups);
  record.noise = std::max(Noise(challenger_speedups), Noise(incumbent_speedups));
  record.samples = static_cast<int>(challenger_speedups.size());
  // A challenger that failed a re-measurement is not confirmed, whatever its median.
  const bool all_measured = Failures(challenger, round) == 0;
  const bool beats = all_measured && record.node_median > record.against_median * (1.0 + record.noise);
  record.verdict = beats           ? ConfirmationVerdict::kConfirmed
                   : all_measured  ? ConfirmationVerdict::kWithinNoise
                                   : ConfirmationVerdict::kUnstable;
  return record;
}

std::optional<ConfirmationRecord> JudgeFinal(std::int64_t node, std::optional<double> speedup,
                                             const Remeasurements& round) {
  const std::vector<double> speedups = Speedups(node, speedup, round);
  if (speedups.empty()) return std::nullopt;
  ConfirmationRecord record;
  record.node_id = node;
  // A kernel that fails a re-measurement (wrong once, crashed once) is not
  // trusted as the best, however fast it was.
  record.verdict = Failures(node, round) > 0 ? ConfirmationVerdict::kUnstable : ConfirmationVerdict::kFinal;
  record.node_median = Median(speedups);
  record.noise = Noise(speedups);
  record.samples = static_cast<int>(speedups.size());
  return record;
}

std::int64_t ChooseBest(const std::map<std::int64_t, double>& medians, const std::set<std::int64_t>& unstable) {
  std::int64_t best = 0;
  double best_median = 0.0;
  for (const auto& [node, median] : medians) {
    if (!unstable.contains(node) && median > best_median) {
      best = node;
      best_median = median;
    }
  }
  return best;
}

}  // namespace kestrel
