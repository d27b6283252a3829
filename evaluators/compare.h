#pragma once
// Comparing a candidate's outputs with the reference's (EVALUATION.md,
// "Correctness"). Both are output files of the runner's "outputs" mode for
// the same job layout, produced in different processes.
//
// An element passes when |out - ref| <= atol + rtol * |ref|. Where the
// reference is not finite, the output must be the same non-finite value
// (NaN for NaN, the same infinity); where it is finite, a NaN or an infinity
// fails. Integers compare through double with the same formula.

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/measurement.h"
#include "core/task.h"
#include "evaluators/job.h"

namespace kestrel {

struct OutputComparison {
  bool ok = true;
  std::string reason;            // one line, empty when ok
  std::string details;           // one line per failing (shape, set, arg), for the log
  std::vector<Mismatch> worst;   // the worst elements, worst first
};

// Compares the two files segment by segment (memory: one buffer at a time).
// An Io error when a file cannot be read; a Corruption error when a file's
// size does not match the job's layout (for the candidate's file: a runner
// protocol violation).
Result<OutputComparison> CompareOutputs(const Job& job, const std::filesystem::path& reference_file,
                                        const std::filesystem::path& candidate_file, const Tolerance& tolerance,
                                        std::size_t max_mismatches = 10);

// Refuses (InvalidArgument) a reference whose output on a timed shape (the
// first `timed_shapes` of the job) is so near-constant that one constant
// value would pass the tolerance on every element of every input set.
Status CheckReferenceVaries(const Job& job, const std::filesystem::path& reference_file, const Tolerance& tolerance,
                            int timed_shapes);

}  // namespace kestrel
