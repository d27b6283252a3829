// CpuEvaluator: profiles of measured candidates (core/profile.h, docs/PROFILES.md).
// What the measurement already says, put where the analysis can read it:
// the largest timed shape's position on the host's roofline, and the time
// per element of each timed shape (a kernel slower per element on a larger
// shape is bound by a cache level it no longer fits in); then the sources
// of cpu_profile_sources.cc (instruction mix, compiler remarks, counters).

#include <algorithm>
#include <chrono>

#include "core/roofline.h"
#include "evaluators/cpu_evaluator.h"
#include "evaluators/task_layout.h"

namespace kestrel {

std::optional<RooflinePosition> CpuEvaluator::RooflineOf(const ShapeTiming& timing) const {
  const auto flops = task_.Flops(timing.shape);
  const auto bytes = task_.Bytes(timing.shape);
  if (!flops && !bytes) return std::nullopt;
  RooflinePosition position;
  position.shape = ShapeLabel(task_, timing.shape);
  position.gflops = timing.gflops;
  position.gbps = timing.gbps;
  position.fraction = timing.roofline_fraction;
  if (flops && bytes && *bytes > 0) position.intensity = *flops / *bytes;
  if (bytes) position.level = LevelFor(host_, *bytes);
  std::lock_guard lock(calibration_mutex_);
  if (!calibration_.ok()) return position;
  position.peak_gflops = calibration_.peak_gflops;
  if (bytes) position.bandwidth_gbps = BandwidthFor(calibration_, host_, *bytes);
  // The bound is the larger of the two times: compute when the flops take
  // longer at peak than the bytes at the level's bandwidth.
  const double compute_s = flops ? *flops / (calibration_.peak_gflops * 1e9) : 0.0;
  const double memory_s = bytes && position.bandwidth_gbps > 0 ? *bytes / (position.bandwidth_gbps * 1e9) : 0.0;
  position.bound = compute_s >= memory_s ? "compute" : "memory";
  return position;
}

Result<Profile> CpuEvaluator::ProfileBuilt(const Candidate& candidate, const BuildResult& build,
                                           const Measurement& measurement) {
  const auto start = std::chrono::steady_clock::now();
  if (!build.ok) return Fail(Error::InvalidArgument("profile: the candidate did not build"));
  if (measurement.outcome != Outcome::kMeasured || measurement.shapes.empty()) {
    return Fail(Error::InvalidArgument("profile: the candidate has no measured result to profile"));
  }
  Profile profile;
  profile.scaling = TimePerElement(task_, measurement);
  const ShapeTiming* largest = nullptr;
  double largest_elements = -1;
  for (const ShapeTiming& timing : measurement.shapes) {
    const double elements = OutputElements(task_, timing.shape);
    if (elements > largest_elements) {
      largest_elements = elements;
      largest = &timing;
    }
  }
  if (largest != nullptr) profile.roofline = RooflineOf(*largest);
  AddProfileSources(candidate, build, profile, &measurement);
  profile.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return profile;
}

}  // namespace kestrel
