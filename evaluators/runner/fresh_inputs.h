#pragma once
// How many elements of each call slot's inputs are drawn afresh before each
// round of timed samples (TimeShapes).
//
// No timed call may see inputs an earlier call saw, or a kernel could answer
// from a memo (c2_memo_by_content); and where its work grows faster than its
// inputs, a few changed elements are not enough: a GEMM that keeps its last
// a, b and c per slot and recomputes only the rows and columns whose inputs
// changed does O(mk + kn + mn) work for the O(mnk) of the product, with
// answers right to the bit (x_patches_changed_rows). Every element drawn
// afresh defeats it, but a draw costs more than a memory-bound kernel spends
// per element. So the share is a budget: a round's draws take about
// kFreshShare of the reference's sample (the reference is trusted: the kernel
// cannot bend its seconds per call), shared by the slots the round uses,
// and at least kLeastElements per argument (as many as any memo needs to
// miss). With the built-in tasks' seeds:
//   - a GEMM's call costs hundreds of draws per input element: 77-100% of
//     them are fresh (less when the candidate is much faster than the
//     reference, as its samples hold more calls: x_patches_changed_rows,
//     whose warm-up it answers from its copies, drew 8-10%, still tens in
//     every row);
//   - a triad's costs less than one: 0.2%; a kernel that patches gains
//     nothing there, as finding what changed costs as much as the work;
//   - in between (softmax, conv1d, layernorm), 3-16%, so that every row or
//     window holds some, and a patch is the whole work.
// The draws cost 5-7% of an evaluation's time (triad 1.77 s against 1.67 s).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "evaluators/job.h"

namespace kestrel::runner {

class FreshInputs {
 public:
  static constexpr std::int64_t kLeastElements = 8;
  static constexpr double kFreshShare = 0.1;

  // Times a draw of each input and inout argument of `shape` (the fastest
  // of three draws of a few thousand elements, into a scratch buffer).
  explicit FreshInputs(const JobShape& shape);

  // Times draws of a few thousand elements at random positions into
  // `data[arg]` (each input and inout's buffer in a call slot; nullptr for
  // the others), as a partial draw makes them: in a buffer of megabytes
  // most miss the caches, which a draw in order into a small scratch
  // buffer does not show (with the ziggurat's normals, 2 to 3 times the
  // cost per element). The values drawn are fresh ones, as any round's,
  // from a generator seeded with `seed` (one the kernel cannot know).
  void TimeScattered(const std::vector<std::byte*>& data, std::uint64_t seed);

  // Elements of each argument such that one slot's draws take about
  // `seconds`: all of them when they fit (at the cost of a draw in order),
  // else the same share of each argument (at the cost of scattered draws,
  // when timed), at least kLeastElements (or all it has).
  void Plan(double seconds);

  // Elements of argument `arg` to draw afresh in each slot (0 for an
  // argument that is neither an input nor an inout).
  std::int64_t elements(std::size_t arg) const { return elements_[arg]; }
  // Of all the input and inout elements of a slot, the share drawn afresh.
  double share() const;

 private:
  const JobShape* shape_;
  std::vector<double> seconds_per_element_;    // drawn in order
  std::vector<double> scattered_per_element_;  // at random positions (0: not timed)
  std::vector<std::int64_t> elements_;
};

}  // namespace kestrel::runner
