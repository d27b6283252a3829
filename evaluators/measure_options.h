#pragma once
// How every evaluator measures (EVALUATION.md): the fields the cpu, cuda and
// command evaluators and the run config's "evaluator" block share.

#include <cstdint>

namespace kestrel {

struct MeasureOptions {
  double min_time_s = 0.5;  // per shape, per kernel (candidate and reference each)
  int min_samples = 10;     // per shape, per kernel
  int input_sets = 3;       // independent input sets checked per shape
  // A higher speedup is `rejected`, flagged for review (its timings are kept)
  // and never ranked (EVALUATION.md: default 50x).
  double max_speedup = 50.0;
  std::uint64_t seed = 1;      // input seed; the candidate never sees it
  double run_timeout_s = 60;   // wall clock per run of the runner (or of the run command)
};

}  // namespace kestrel
