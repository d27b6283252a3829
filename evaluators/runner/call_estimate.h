#pragma once
// How long one call of a kernel takes, as its warm-up measures it: what
// decides how many calls each of its timed samples holds (PlanRounds).
//
// A sample is timed by the supervisor from its request to the worker's
// answer, so each sample also holds one round trip of the control channel
// (some 30-50 us on a virtual machine). Samples of about a millisecond of
// calls keep that small, and alike for the candidate and the reference;
// that needs an estimate that neither of these makes too large:
//   - the round trip itself, in every warm-up batch: it is measured (an
//     empty run) and taken off;
//   - a stall (the scheduler, an interrupt, the hypervisor) in one batch:
//     the estimate is the fastest batch's, and a second batch is always
//     timed. A stall of 4 ms in a two-call batch once made a 30 us kernel's
//     estimate 2.3 ms: one call per sample, and the kernel measured at
//     0.42x of the same code as the reference.
// The estimate sizes samples only; it is never part of a measurement, so a
// kernel that slows its own round trip gains nothing from it.

#include <cstdint>

namespace kestrel::runner {

class CallEstimate {
 public:
  // `round_trip_s`: the fastest empty run; `batch_cap`: the most calls a
  // batch may hold (the slots already called); `enough_s`: the time in
  // batches (round trips included: the warm-up's own length) that makes an
  // estimate, with at least two batches; `max_calls`: the most calls in all;
  // `long_call_s`: a call at least this long needs no second batch (a
  // sample of one such call dwarfs the round trip, and a second batch
  // would cost as long again).
  CallEstimate(double round_trip_s, std::uint32_t batch_cap, double enough_s, std::uint32_t max_calls,
               double long_call_s);

  // A batch of `calls` calls that took `seconds`, round trip included.
  void Add(std::uint32_t calls, double seconds);
  // Whether the batches so far make an estimate.
  bool Done() const;
  // Calls in the next batch: as few as make up `enough_s`, at most batch_cap.
  std::uint32_t NextBatch() const;
  // Seconds per call: the fastest batch's, its round trip taken off (at
  // least 1 ns); 0 before the first batch.
  double PerCall() const;
  int batches() const { return batches_; }

 private:
  double round_trip_s_;
  std::uint32_t batch_cap_;
  double enough_s_;
  std::uint32_t max_calls_;
  double long_call_s_;
  double fastest_ = 0;  // seconds per call of the fastest batch, round trip off
  double timed_s_ = 0;  // in batches, round trips included
  std::uint64_t calls_ = 0;
  int batches_ = 0;
};

}  // namespace kestrel::runner
