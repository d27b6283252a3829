#pragma once
// What evaluating a candidate produced: plain data, the same for every
// evaluator. A bad candidate is a Measurement with a non-measured outcome,
// never an exception (ARCHITECTURE.md, "Evaluator").

#include <cstdint>
#include <string>
#include <vector>

#include "core/outcome.h"
#include "core/task.h"

namespace kestrel {

// Order statistics of raw per-call times, in seconds.
struct SampleStats {
  double median = 0.0;
  double p10 = 0.0;
  double p90 = 0.0;
  double spread = 0.0;  // (p90 - p10) / median
  int count = 0;
};
SampleStats Summarize(std::vector<double> seconds);

// One timed shape. Candidate and reference were timed interleaved, in the
// same evaluation, on the same device slot.
struct ShapeTiming {
  Shape shape;
  std::vector<double> candidate_seconds;  // raw samples, seconds per call
  std::vector<double> reference_seconds;
  SampleStats candidate;
  SampleStats reference;
  double speedup = 0.0;  // reference.median / candidate.median
  double gflops = 0.0;   // 0 when the task has no flops formula
  double gbps = 0.0;     // 0 when the task has no bytes formula
  // The roofline time (core/roofline.h) over the candidate's median: 1 is the
  // hardware's limit; 0 when the host is not calibrated or the task has no formulas.
  double roofline_fraction = 0.0;
  // Calls timed together per sample (batching for short kernels), from the
  // evaluation; not stored (0 when read back from the database).
  std::int64_t candidate_calls_per_sample = 0;
  std::int64_t reference_calls_per_sample = 0;
};

// The worst elementwise disagreements with the reference, for the log and
// for an LLM fix prompt.
struct Mismatch {
  int shape_index = 0;  // into shapes followed by check_shapes
  int input_set = 0;
  std::string arg;
  std::int64_t index = 0;
  double expected = 0.0;
  double actual = 0.0;
};

struct Measurement {
  Outcome outcome = Outcome::kRejected;
  std::string reason;  // one short line: "3 of 3 input sets differ on shape rows=7 cols=33"
  std::string log;     // compiler errors, runner output, worst mismatches (trimmed)
  std::vector<ShapeTiming> shapes;  // measured only
  std::vector<Mismatch> mismatches;  // wrong only
  double speedup = 0.0;             // geometric mean over shapes; measured only
  double roofline_fraction = 0.0;   // geometric mean over shapes; 0 when unknown
  // The task's expert baseline's speedup over the reference (geometric mean
  // over shapes), timed by the same evaluator on the same host; 0 when the
  // task has none. The candidate's speedup over the baseline is
  // speedup / baseline_speedup (SpeedupOverBaseline).
  double baseline_speedup = 0.0;
  double build_seconds = 0.0;
  double eval_seconds = 0.0;
  int input_sets = 0;      // independent input sets checked per shape
  std::uint64_t seed = 0;  // input seed of this evaluation
  // Not a verdict: the evaluator withdrew the candidate's job before it ran
  // (a stop was requested while it waited in a cluster's queue). The engine
  // records nothing and leaves the candidate `built` for the next run.
  bool withdrawn = false;
};

// Geometric mean of the per-shape speedups; 0 when there are none.
double GeomeanSpeedup(const std::vector<ShapeTiming>& shapes);

// A speedup over the reference expressed over the expert baseline: the
// geometric mean over shapes of baseline time / candidate time (geomeans
// divide). 0 when there is no baseline figure.
double SpeedupOverBaseline(double speedup, double baseline_speedup);

}  // namespace kestrel
