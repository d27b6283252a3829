#pragma once
// What each kind of mutation achieved (`kestrel stats`, issue 18): the
// children a direction made, grouped by the direction's category (a bandit
// direction, a recommendation rank of the analysis, a knob move, a combine,
// a fix), with how many were faster than their parent, how many failed and
// their mean gain over the parent. Computed from the stored graph: the
// edges' mutation strings and the nodes' results.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/records.h"

namespace kestrel {

struct DirectionStats {
  std::string category;    // "vectorize", "analysis rec 1", "knob", "combine", "fix", ...
  std::int64_t tries = 0;  // children made
  std::int64_t successes = 0;  // measured faster than their parent
  std::int64_t failures = 0;   // build_failed, wrong, crashed, timed_out, rejected
  std::int64_t pending = 0;    // no final result yet
  double mean_gain = 0.0;      // mean of child / parent - 1 over the measured children of measured parents
  std::int64_t gains = 0;      // how many children that mean is over
  // A cost model's predictions against the measurements, over the measured
  // children whose mutation says what was predicted ("model (3.10x
  // predicted): ..." from the knob advisor, "(version 2 of 3, 1.84x
  // predicted)" from the code model): how many, Spearman's rank correlation
  // of predicted and measured speedups (with 3 or more), and the median of
  // |measured / predicted - 1|.
  std::int64_t predicted = 0;
  std::optional<double> rank_correlation;
  std::optional<double> median_error;
};

// The speedup a mutation says a cost model predicted ("... (3.10x predicted)..."), if any.
std::optional<double> PredictedSpeedup(std::string_view mutation);

// The category of a mutation string: "llm:MODEL:vectorize" -> "vectorize",
// "llm:MODEL:rec 2/3: tile ..." -> "analysis rec 2", "knob U 1->2" -> "knob",
// the knob advisor's "restart: ..." -> "knob restart" (model, multi, cross too),
// "combine #3 + #9: llm:M" -> "combine", "llm:MODEL:fix wrong" -> "fix";
// a version of a reply, "llm:MODEL:vectorize (version 2 of 3, ...)", -> its direction's.
std::string DirectionCategory(std::string_view mutation);

// Per category, by tries (most first, then by name), over the derive and
// fix edges of `edges` (of `run` only, when given) whose nodes are in `nodes`.
std::vector<DirectionStats> ComputeDirectionStats(const std::vector<NodeRecord>& nodes,
                                                  const std::vector<EdgeRecord>& edges,
                                                  std::optional<std::int64_t> run = std::nullopt);

}  // namespace kestrel
