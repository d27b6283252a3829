#include "evaluators/runner/fresh_inputs.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "evaluators/runner/inputs.h"

namespace kestrel::runner {
namespace {

constexpr std::int64_t kTimedElements = 4096;
constexpr int kTimings = 3;
// A scattered draw is taken to cost at most this many times one in order
// (2 to 3 times is usual): the kernel's threads, thawed between rounds,
// could crowd the memory while it is timed (within the supervisor's slack
// for CPU time while idle) to shrink the share; this bounds what that buys.
constexpr double kMostScatteredCost = 8.0;

bool Drawn(ArgRole role) { return role == ArgRole::kInput || role == ArgRole::kInOut; }

}  // namespace

FreshInputs::FreshInputs(const JobShape& shape)
    : shape_(&shape),
      seconds_per_element_(shape.args.size(), 0.0),
      scattered_per_element_(shape.args.size(), 0.0),
      elements_(shape.args.size(), 0) {
  std::vector<std::byte> scratch;
  for (std::size_t a = 0; a < shape.args.size(); ++a) {
    const JobArg& arg = shape.args[a];
    if (!Drawn(arg.role) || arg.count <= 0) continue;
    JobArg sample = arg;
    sample.count = std::min(arg.count, kTimedElements);
    scratch.resize(static_cast<std::size_t>(sample.count) * 8);
    // The fastest of a few draws: a stall in one (the scheduler, an
    // interrupt) would make the draws look dear and the share small.
    double seconds = 1.0;
    for (int attempt = 0; attempt < kTimings; ++attempt) {
      const auto start = std::chrono::steady_clock::now();
      DrawAfresh(sample, {0x9E3779B97F4A7C15ULL + a + attempt, 0}, sample.count, scratch.data());
      seconds = std::min(seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    seconds_per_element_[a] = std::max(seconds, 1e-9) / static_cast<double>(sample.count);
    elements_[a] = std::min(arg.count, kLeastElements);
  }
}

void FreshInputs::TimeScattered(const std::vector<std::byte*>& data, std::uint64_t seed) {
  for (std::size_t a = 0; a < shape_->args.size() && a < data.size(); ++a) {
    const JobArg& arg = shape_->args[a];
    if (!Drawn(arg.role) || arg.count <= kTimedElements || data[a] == nullptr) continue;
    double seconds = 1.0;
    for (int attempt = 0; attempt < kTimings; ++attempt) {
      const auto start = std::chrono::steady_clock::now();
      const std::uint64_t values = NextRandom(seed);
      DrawAfresh(arg, {values, NextRandom(seed)}, kTimedElements, data[a]);
      seconds = std::min(seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    scattered_per_element_[a] = std::min(std::max(seconds, 1e-9) / static_cast<double>(kTimedElements),
                                         kMostScatteredCost * seconds_per_element_[a]);
  }
}

void FreshInputs::Plan(double seconds) {
  double in_order = 0, scattered = 0;
  for (std::size_t a = 0; a < shape_->args.size(); ++a) {
    const auto count = static_cast<double>(std::max<std::int64_t>(shape_->args[a].count, 0));
    in_order += seconds_per_element_[a] * count;
    scattered += std::max(seconds_per_element_[a], scattered_per_element_[a]) * count;
  }
  const double share = in_order <= seconds ? 1.0 : std::min(1.0, seconds / scattered);
  for (std::size_t a = 0; a < shape_->args.size(); ++a) {
    const JobArg& arg = shape_->args[a];
    if (!Drawn(arg.role) || arg.count <= 0) continue;
    const auto wanted = static_cast<std::int64_t>(std::ceil(share * static_cast<double>(arg.count)));
    elements_[a] = std::clamp(wanted, std::min(arg.count, kLeastElements), arg.count);
  }
}

double FreshInputs::share() const {
  double drawn = 0, all = 0;
  for (std::size_t a = 0; a < shape_->args.size(); ++a) {
    if (!Drawn(shape_->args[a].role) || shape_->args[a].count <= 0) continue;
    drawn += static_cast<double>(elements_[a]);
    all += static_cast<double>(shape_->args[a].count);
  }
  return all > 0 ? drawn / all : 1.0;
}

}  // namespace kestrel::runner
