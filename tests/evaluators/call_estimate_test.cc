// CallEstimate (evaluators/runner/call_estimate.h): a kernel's seconds per
// call from its warm-up batches, with the control channel's round trip and
// a stall in one batch kept out of it.

#include "evaluators/runner/call_estimate.h"

#include <doctest.h>

namespace kestrel::runner {
namespace {

constexpr double kUs = 1e-6;
constexpr double kRoundTrip = 25 * kUs;
constexpr double kEnough = 1e-3;        // time_mode.cc's kMinSampleSeconds
constexpr std::uint32_t kMaxCalls = 4096;
constexpr double kLongCall = 0.05;      // time_mode.cc's kMaxSampleSeconds

// Runs the warm-up's loop on a kernel of `per_call` seconds whose batch
// number `stalled` (0 first) stalls for `stall` seconds; the estimate.
CallEstimate WarmUp(double per_call, std::uint32_t cap, int stalled = -1, double stall = 0) {
  CallEstimate estimate(kRoundTrip, cap, kEnough, kMaxCalls, kLongCall);
  for (int batch = 0; !estimate.Done(); ++batch) {
    const std::uint32_t calls = estimate.NextBatch();
    estimate.Add(calls, kRoundTrip + calls * per_call + (batch == stalled ? stall : 0));
    REQUIRE(batch < 10000);
  }
  return estimate;
}

TEST_SUITE("call_estimate") {
  TEST_CASE("a stall in the first batch does not make the estimate") {
    // The case measured: two calls of 30 us and a stall of 4.5 ms; the old
    // estimate (the batches' mean) was 2.3 ms per call.
    const CallEstimate estimate = WarmUp(30 * kUs, 2, 0, 4.5e-3);
    CHECK(estimate.batches() >= 2);
    CHECK(estimate.PerCall() == doctest::Approx(30 * kUs).epsilon(1e-6));
  }

  TEST_CASE("a stall in a later batch does not either") {
    for (int stalled = 1; stalled < 4; ++stalled) {
      CAPTURE(stalled);
      CHECK(WarmUp(30 * kUs, 3, stalled, 8e-3).PerCall() == doctest::Approx(30 * kUs).epsilon(1e-6));
    }
  }

  TEST_CASE("the round trip is taken off: a fast kernel is not estimated at its round trip") {
    // Batches of one call of 1 us, each with a round trip of 25 us: the
    // batches' mean would be 26 us, and samples 26 times too short.
    const CallEstimate estimate = WarmUp(1 * kUs, 1);
    CHECK(estimate.PerCall() == doctest::Approx(1 * kUs).epsilon(1e-6));
    // The warm-up lasts about kEnough, round trips included (not kEnough of
    // calls, which would be 40 round trips for every call's worth).
    CHECK(estimate.batches() < 50);
  }

  TEST_CASE("a batch faster than the round trip gives the least estimate, not a negative one") {
    CallEstimate estimate(kRoundTrip, 3, kEnough, kMaxCalls, kLongCall);
    estimate.Add(3, 20 * kUs);
    CHECK(estimate.PerCall() > 0);
    CHECK(estimate.PerCall() <= 1e-9);
    CHECK(estimate.NextBatch() == 3);  // as many calls as a batch may hold
  }

  TEST_CASE("two batches at least, even when the first lasted long enough") {
    CallEstimate estimate(kRoundTrip, 3, kEnough, kMaxCalls, kLongCall);
    estimate.Add(3, kRoundTrip + 3 * 2e-3);
    CHECK_FALSE(estimate.Done());
    CHECK(estimate.NextBatch() == 1);  // one call of 2 ms makes up a sample
    estimate.Add(1, kRoundTrip + 2e-3);
    CHECK(estimate.Done());
    CHECK(estimate.PerCall() == doctest::Approx(2e-3));
  }

  TEST_CASE("a call longer than a sample's most needs no second batch") {
    CallEstimate estimate(kRoundTrip, 3, kEnough, kMaxCalls, kLongCall);
    estimate.Add(3, kRoundTrip + 3 * 0.2);
    CHECK(estimate.Done());
    CHECK(estimate.PerCall() == doctest::Approx(0.2));
  }

  TEST_CASE("the warm-up ends at its most calls however fast the kernel") {
    const CallEstimate estimate = WarmUp(0, 3);
    CHECK(estimate.PerCall() == doctest::Approx(1e-9));
    CHECK(estimate.batches() <= static_cast<int>(kMaxCalls / 3) + 1);
  }

  TEST_CASE("before any batch: no estimate, and a first batch of every slot") {
    const CallEstimate estimate(kRoundTrip, 3, kEnough, kMaxCalls, kLongCall);
    CHECK_FALSE(estimate.Done());
    CHECK(estimate.PerCall() == 0);
    CHECK(estimate.NextBatch() == 3);
  }
}

}  // namespace
}  // namespace kestrel::runner
