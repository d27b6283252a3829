#pragma once
// The hidden-shape check (core/hidden_shapes.h; EVALUATION.md,
// "Correctness") for an evaluator that drives a runner (cpu, cuda): the
// reference and then the candidate in outputs jobs on shapes drawn from the
// task's shape_ranges (one input set of the check's own seed), the
// candidate's outputs judged like any check (judge.h). Its messages call
// the shapes "hidden shape 1", ..., never by size: a fix prompt may quote
// them. A reference that fails a drawn shape skips the check with a note.

#include <cstdint>
#include <filesystem>

#include "evaluators/evaluator.h"
#include "evaluators/judge.h"

namespace kestrel {

// `reference`: the evaluator's outputs job for its reference (its shapes,
// seed, input sets and files are set here); `dir`: a fresh folder of the
// check's own, removed when this returns.
HiddenShapeCheck CheckHiddenShapesWithRunner(const Task& task, Job reference, const BuildResult& build,
                                             std::uint64_t seed, const std::filesystem::path& dir,
                                             const RunJobFunction& run_job);

}  // namespace kestrel
