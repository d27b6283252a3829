#pragma once
// The confirmation rule (EVALUATION.md, "Confirmation"), apart from the
// engine's locking and storing: pure functions of measured speedups.
//
//   S_c = the challenger's first result and its measured re-measurements
//   S_i = the incumbent's speedup so far (one value) and its re-measurements
//   noise = max( (max S_c - min S_c) / median S_c, (max S_i - min S_i) / median S_i )
//   confirmed     <=>  every re-measurement of the challenger measured and
//                      median S_c > median S_i * (1 + noise)
//   unstable      <=>  a re-measurement of the challenger failed
//   within_noise  otherwise
//
// At the end of a run each re-measured node is `final`, or `unstable` when a
// re-measurement failed; the best is the highest median of the stable ones.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "core/measurement.h"
#include "store/records.h"

namespace kestrel {

// Re-measurements in the order they were taken: (node, its result).
using Remeasurements = std::vector<std::pair<std::int64_t, Measurement>>;

// The middle value (the mean of the two middle ones for an even count); 0 for none.
double Median(std::vector<double> values);
// (max - min) / median; 0 for fewer than two values.
double Noise(const std::vector<double>& values);

// The verdict on `challenger` (first measured at `challenger_speedup`)
// against `incumbent` (at `incumbent_speedup` so far) after their round.
// run_id and host_id are left for the caller.
ConfirmationRecord JudgeRound(std::int64_t challenger, double challenger_speedup, std::int64_t incumbent,
                              double incumbent_speedup, const Remeasurements& round);

// The end-of-run verdict on `node` (its speedup so far, if measured) after the
// final round; nullopt when it has no measured result at all.
std::optional<ConfirmationRecord> JudgeFinal(std::int64_t node, std::optional<double> speedup,
                                             const Remeasurements& round);

// The best after the final rounds: the highest median that is not unstable
// (a tie goes to the lower node id); 0 when none is above 0.
std::int64_t ChooseBest(const std::map<std::int64_t, double>& medians, const std::set<std::int64_t>& unstable);

}  // namespace kestrel
