#include "core/measurement.h"

#include <algorithm>
#include <cmath>

namespace kestrel {
namespace {

// Linear interpolation between closest ranks; `sorted` is not empty.
double Percentile(const std::vector<double>& sorted, double p) {
  const double rank = p * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

}  // namespace

SampleStats Summarize(std::vector<double> seconds) {
  SampleStats stats;
  if (seconds.empty()) return stats;
  std::sort(seconds.begin(), seconds.end());
  stats.count = static_cast<int>(seconds.size());
  stats.median = Percentile(seconds, 0.5);
  stats.p10 = Percentile(seconds, 0.1);
  stats.p90 = Percentile(seconds, 0.9);
  stats.spread = stats.median > 0 ? (stats.p90 - stats.p10) / stats.median : 0.0;
  return stats;
}

double GeomeanSpeedup(const std::vector<ShapeTiming>& shapes) {
  if (shapes.empty()) return 0.0;
  double log_sum = 0.0;
  for (const auto& shape : shapes) {
    if (!(shape.speedup > 0)) return 0.0;
    log_sum += std::log(shape.speedup);
  }
  return std::exp(log_sum / static_cast<double>(shapes.size()));
}

double SpeedupOverBaseline(double speedup, double baseline_speedup) {
  return speedup > 0 && baseline_speedup > 0 ? speedup / baseline_speedup : 0.0;
}

}  // namespace kestrel
