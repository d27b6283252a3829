#pragma once
// The field's metrics of a benchmark suite (docs/SUITE.md), as pure
// arithmetic on one row per task: pass, fast_p over the reference and over the
// expert baseline (a win counts only beyond its noise), the geometric mean
// with failures counted as 1.0, the roofline gap closed, evaluations per
// hour, time to the first correct kernel and LLM spend.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kestrel {

// The thresholds p of fast_p, in the order reports print them.
inline constexpr std::array<double, 4> kFastP = {0.0, 1.0, 1.5, 2.0};

// What a suite's report reads of one task's run.
struct SuiteTaskResult {
  std::string task;
  int level = 0;
  std::string state;   // the suite task's: pending, running, done, failed, skipped
  std::string reason;  // failed or skipped: why
  std::int64_t run_id = 0;
  // A correct kernel: the run's best measured node, passing every check
  // (hidden shapes included), not unstable in a confirmation round, and not
  // labelled `reward_hack` or `wrong` by a person.
  bool correct = false;
  int labelled_out = 0;  // better nodes passed over for such a label
  std::int64_t best_node = 0;
  double speedup = 0.0;           // its speedup over the reference (median of its measured results)
  double baseline_speedup = 0.0;  // the expert baseline's over the reference; 0: the task has none
  double noise = 0.0;             // relative width of the speedup's interval (docs/SUITE.md)
  double roofline_fraction = 0.0;  // 0: unknown (host not calibrated, or no flops/bytes formula)
  std::int64_t evaluations = 0;
  double active_seconds = 0.0;     // the run's searching time, over all its sessions
  std::optional<double> first_correct_s;  // from the run's start to its first correct result
  double llm_usd = 0.0;
};

// Whether `speedup` beats p beyond its noise: p 0 asks only for a kernel
// (speedup > 0); otherwise speedup > p * (1 + noise), the confirmation rule's
// test, so a tie within noise is not faster.
bool FasterBeyondNoise(double speedup, double p, double noise);

// The task's speedup over its expert baseline; 0 without one or without a correct kernel.
double OverBaseline(const SuiteTaskResult& task);
// fast_p of one task over the reference, and over the baseline (false without one).
bool FastOverReference(const SuiteTaskResult& task, double p);
bool FastOverBaseline(const SuiteTaskResult& task, double p);

// The share of the gap from the reference's time to the roofline time that
// the kernel closed: (t_ref - t_best) / (t_ref - t_roofline), which in
// speedup s and roofline fraction r of the kernel is (s - 1) / (s - r).
// nullopt when r is unknown (0) or the reference is at the roofline already
// (s <= r). Negative for a kernel slower than the reference.
std::optional<double> GapClosed(double speedup, double roofline_fraction);

// Geometric mean; 0 for none.
double GeometricMean(const std::vector<double>& values);

// A level's (or the whole suite's) summary over its run tasks; skipped and
// never-run (pending) tasks are counted apart and score nothing.
struct SuiteSummary {
  int level = 0;    // 0: every level
  int tasks = 0;    // tasks searched (done, failed or running)
  int skipped = 0;  // the evaluator cannot run them, or not run yet
  int correct = 0;
  int with_baseline = 0;  // tasks with an expert baseline
  std::array<double, kFastP.size()> fast_reference{};  // shares of `tasks`
  std::array<double, kFastP.size()> fast_baseline{};   // shares of `with_baseline`
  double geomean_reference = 0.0;  // failures counted as 1.0
  double geomean_baseline = 0.0;   // over tasks with a baseline, a failure at 1 / baseline_speedup (the reference's standing)
  std::optional<double> mean_roofline;    // over correct tasks with a known roofline fraction
  std::optional<double> mean_gap_closed;  // over tasks where it is defined; failures close 0
  double evaluations_per_hour = 0.0;      // all evaluations over all active hours
  std::optional<double> mean_first_correct_s;
  double llm_usd = 0.0;
  std::optional<double> usd_per_speedup;  // llm_usd over tasks with a confirmed fast_1 win; nullopt for none
};

// The summary of `tasks` (all levels mixed: the caller filters); `level` is copied.
SuiteSummary Summarize(const std::vector<SuiteTaskResult>& tasks, int level);

}  // namespace kestrel
