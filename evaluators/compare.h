#pragma once
// Comparing a candidate's outputs with the reference's (EVALUATION.md,
// "Correctness"). Both are output files of the runner's "outputs" mode for
// the same job layout, produced in different processes.
//
// An element passes when |out - ref| <= atol + rtol * |ref|. Where the
// reference is not finite, the output must be the same non-finite value
// (NaN for NaN, the same infinity); where it is finite, a NaN or an infinity
// fails. Integers compare through double with the same formula.
//
// Besides, each buffer must pass a relative L2 bound: over its finite
// reference elements, ||out - ref||2 <= (rtol * ||ref||2 + atol * sqrt(n)) / 2,
// i.e. the RMS error stays within half of what the elementwise test allows.
// Honest reorderings of floating-point sums sit far below it (their errors are
// a few ulps and scattered); a kernel that spends the whole tolerance on
// every element (a constant offset, a systematically lower precision) fails
// it even when each element passes. Reason: "relative L2 error E exceeds half
// the tolerance on shape S, set K, ARG".

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/measurement.h"
#include "core/task.h"
#include "evaluators/job.h"

namespace kestrel {

// OutputComparison (the verdict of a comparison) is declared in job.h: an
// evaluate job's runner compares in memory and reports it in its result.

// Compares output buffers one at a time, in memory, in the order of
// OutputSegments(job); Finish() words the verdict. The runner feeds it the
// candidate's buffers straight from shared memory and the reference's from
// its mapped file; CompareOutputs feeds it two files.
class OutputComparer {
 public:
  OutputComparer(const Job& job, const Tolerance& tolerance, std::size_t max_mismatches = 10);
  ~OutputComparer();
  OutputComparer(const OutputComparer&) = delete;
  OutputComparer& operator=(const OutputComparer&) = delete;
  void Add(const OutputSegment& segment, const std::byte* expected, const std::byte* actual);
  OutputComparison Finish();

 private:
  struct State;
  const Job& job_;
  Tolerance tolerance_;
  std::size_t max_mismatches_;
  std::unique_ptr<State> state_;
};

// The first of `count` elements of `type` where `actual` fails the element
// test against `expected` (above), or -1 when none does: the supervisor's
// re-check of a timed call against the reference's on the same inputs.
std::int64_t FirstMismatch(ScalarType type, const std::byte* actual, const std::byte* expected, std::int64_t count,
                           const Tolerance& tolerance);

// Compares the two files segment by segment (memory: one buffer at a time).
// An Io error when a file cannot be read; a Corruption error when a file's
// size does not match the job's layout (for the candidate's file: a runner
// protocol violation).
Result<OutputComparison> CompareOutputs(const Job& job, const std::filesystem::path& reference_file,
                                        const std::filesystem::path& candidate_file, const Tolerance& tolerance,
                                        std::size_t max_mismatches = 10);

// Writes to `to_file` the output segments of job `to` copied from the same
// (shape index, input set, arg) of `from_file`, an output file of job `from`
// (e.g. the timed shapes and first sets of a full reference output).
// InvalidArgument when `to` asks for a segment `from` lacks.
Status SliceOutputs(const Job& from, const std::filesystem::path& from_file, const Job& to,
                    const std::filesystem::path& to_file);

// Refuses (InvalidArgument) a reference whose output on a timed shape (the
// first `timed_shapes` of the job) is so near-constant that one constant
// value would pass the tolerance on every element of every input set.
Status CheckReferenceVaries(const Job& job, const std::filesystem::path& reference_file, const Tolerance& tolerance,
                            int timed_shapes);

}  // namespace kestrel
