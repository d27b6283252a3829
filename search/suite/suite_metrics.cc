#include "search/suite/suite_metrics.h"

#include <algorithm>
#include <cmath>

namespace kestrel {
namespace {

// A task the suite searched to its end: its result scores (a failure as
// the reference). One still running (an interrupted suite's) is not yet
// run: it was scored as a failed search.
bool Searched(const SuiteTaskResult& task) { return task.state == "done" || task.state == "failed"; }

double Mean(const std::vector<double>& values) {
  double sum = 0.0;
  for (double value : values) sum += value;
  return values.empty() ? 0.0 : sum / static_cast<double>(values.size());
}

std::optional<double> MeanIfAny(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  return Mean(values);
}

}  // namespace

bool FasterBeyondNoise(double speedup, double p, double noise) {
  if (p <= 0.0) return speedup > 0.0;
  return speedup > p * (1.0 + std::max(noise, 0.0));
}

double OverBaseline(const SuiteTaskResult& task) {
  if (!task.correct || task.baseline_speedup <= 0.0) return 0.0;
  return task.speedup / task.baseline_speedup;
}

bool FastOverReference(const SuiteTaskResult& task, double p) {
  return task.correct && FasterBeyondNoise(task.speedup, p, task.noise);
}

bool FastOverBaseline(const SuiteTaskResult& task, double p) {
  return task.correct && task.baseline_speedup > 0.0 && FasterBeyondNoise(OverBaseline(task), p, task.noise);
}

std::optional<double> GapClosed(double speedup, double roofline_fraction) {
  if (roofline_fraction <= 0.0 || speedup <= roofline_fraction) return std::nullopt;
  return (speedup - 1.0) / (speedup - roofline_fraction);
}

double GeometricMean(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  double logs = 0.0;
  for (double value : values) logs += std::log(value);
  return std::exp(logs / static_cast<double>(values.size()));
}

SuiteSummary Summarize(const std::vector<SuiteTaskResult>& tasks, int level) {
  SuiteSummary summary;
  summary.level = level;
  std::vector<double> over_reference, over_baseline, rooflines, gaps, first_correct;
  std::array<int, kFastP.size()> fast_reference{}, fast_baseline{};
  double hours = 0.0;
  std::int64_t evaluations = 0;
  int wins = 0;
  for (const SuiteTaskResult& task : tasks) {
    if (!Searched(task)) {
      ++summary.skipped;
      continue;
    }
    ++summary.tasks;
    if (task.correct) ++summary.correct;
    over_reference.push_back(task.correct && task.speedup > 0 ? task.speedup : 1.0);
    if (task.baseline_speedup > 0.0) {
      ++summary.with_baseline;
      // A failure stays at the reference: the reference's standing over the baseline.
      const double failed = 1.0 / task.baseline_speedup;
      over_baseline.push_back(task.correct ? OverBaseline(task) : failed);
    }
    for (std::size_t i = 0; i < kFastP.size(); ++i) {
      fast_reference[i] += FastOverReference(task, kFastP[i]) ? 1 : 0;
      fast_baseline[i] += FastOverBaseline(task, kFastP[i]) ? 1 : 0;
    }
    if (task.correct && task.roofline_fraction > 0.0) rooflines.push_back(task.roofline_fraction);
    if (task.correct) {
      if (auto gap = GapClosed(task.speedup, task.roofline_fraction)) gaps.push_back(*gap);
    } else if (task.roofline_fraction > 0.0) {
      gaps.push_back(0.0);
    }
    evaluations += task.evaluations;
    hours += task.active_seconds / 3600.0;
    if (task.first_correct_s) first_correct.push_back(*task.first_correct_s);
    summary.llm_usd += task.llm_usd;
    if (FastOverReference(task, 1.0)) ++wins;
  }
  for (std::size_t i = 0; i < kFastP.size(); ++i) {
    if (summary.tasks > 0) summary.fast_reference[i] = static_cast<double>(fast_reference[i]) / summary.tasks;
    if (summary.with_baseline > 0) summary.fast_baseline[i] = static_cast<double>(fast_baseline[i]) / summary.with_baseline;
  }
  summary.geomean_reference = GeometricMean(over_reference);
  summary.geomean_baseline = GeometricMean(over_baseline);
  summary.mean_roofline = MeanIfAny(rooflines);
  summary.mean_gap_closed = MeanIfAny(gaps);
  summary.evaluations_per_hour = hours > 0.0 ? static_cast<double>(evaluations) / hours : 0.0;
  summary.mean_first_correct_s = MeanIfAny(first_correct);
  if (wins > 0) summary.usd_per_speedup = summary.llm_usd / wins;
  return summary;
}

}  // namespace kestrel
