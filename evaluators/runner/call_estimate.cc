#include "evaluators/runner/call_estimate.h"

#include <algorithm>
#include <cmath>

namespace kestrel::runner {

namespace {
constexpr double kLeastPerCall = 1e-9;
}  // namespace

CallEstimate::CallEstimate(double round_trip_s, std::uint32_t batch_cap, double enough_s, std::uint32_t max_calls,
                           double long_call_s)
    : round_trip_s_(std::max(round_trip_s, 0.0)),
      batch_cap_(std::max<std::uint32_t>(batch_cap, 1)),
      enough_s_(enough_s),
      max_calls_(max_calls),
      long_call_s_(long_call_s) {}

void CallEstimate::Add(std::uint32_t calls, double seconds) {
  if (calls == 0) return;
  const double work = std::max(seconds - round_trip_s_, 0.0);
  const double per_call = std::max(work / calls, kLeastPerCall);
  fastest_ = batches_ == 0 ? per_call : std::min(fastest_, per_call);
  timed_s_ += seconds;
  calls_ += calls;
  ++batches_;
}

bool CallEstimate::Done() const {
  if (batches_ == 0) return false;
  if (calls_ >= max_calls_ || fastest_ >= long_call_s_) return true;
  return batches_ >= 2 && timed_s_ >= enough_s_;
}

std::uint32_t CallEstimate::NextBatch() const {
  if (batches_ == 0) return batch_cap_;
  return static_cast<std::uint32_t>(std::clamp<double>(std::ceil(enough_s_ / PerCall()), 1, batch_cap_));
}

double CallEstimate::PerCall() const { return batches_ == 0 ? 0.0 : std::max(fastest_, kLeastPerCall); }

}  // namespace kestrel::runner
