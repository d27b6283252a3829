#pragma once
// Judging what a runner's jobs report (job.h), the same way for every
// evaluator that drives a runner (cpu, cuda; EVALUATION.md, "Correctness"
// and "Timing"). Each step returns the Measurement that ends the evaluation,
// or nothing when the candidate passes it:
//
//   JudgeReferenceRun  the reference's outputs job, when an evaluator is
//                      made: in order, inputs untouched, deterministic, and
//                      its outputs vary with the inputs (else a bad task);
//   JudgeOutputs       a candidate's outputs job: in order, inputs
//                      untouched, two calls alike, outputs within the task's
//                      tolerance of the reference's (worst mismatches kept);
//   JudgeTimedOutputs  the outputs it produced while being timed;
//   JudgeTimings       the time job's samples, checked and summarised into
//                      a `measured` Measurement (speedup, GFLOP/s, GB/s);
//   CheckAndTime       the two jobs of an evaluation run and judged in turn;
//   CheckAndTimeInOneJob  the same two steps as one evaluate job (one
//                      runner, one candidate worker), judged the same way.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/measurement.h"
#include "core/task.h"
#include "evaluators/job.h"
#include "evaluators/runner_job.h"

namespace kestrel {

// What the jobs of one evaluator share: its task and job layout.
struct JudgeContext {
  const Task* task = nullptr;
  const std::vector<JobShape>* all_shapes = nullptr;    // timed, then check shapes
  const std::vector<JobShape>* timed_shapes = nullptr;
  int input_sets = 1;
};

// "Wrong number of checks", "checks out of order", or "" when the outputs
// job's checks come one per (shape, input set), in that order.
std::string CheckOrder(const JobResult& result, std::size_t shapes, int sets);

// The layout of a time job's timed outputs: its shapes, one set per buffer set.
Job TimedLayout(const Job& time);

// Errors: InvalidArgument ("task T: the reference modifies its input x ...")
// for a bad task, Internal for a runner that broke the protocol.
Status JudgeReferenceRun(const JudgeContext& context, const Job& job, const JobResult& result,
                         const std::filesystem::path& reference_outputs);

// The reference's outputs of the timing buffer sets, sliced from its
// outputs into `file`, for the re-check of what the candidate produced
// while timed.
Result<std::filesystem::path> PrepareTimedOutputs(const JudgeContext& context, const Job& outputs, const Job& time,
                                                  const std::filesystem::path& reference_outputs,
                                                  const std::filesystem::path& file);

std::optional<Measurement> JudgeOutputs(const JudgeContext& context, const Job& outputs, const JobResult& result,
                                        const std::filesystem::path& reference_outputs, const std::string& log);

// The runner's comparison when the result carries one (an evaluate job's),
// else the files' (job.output_file, time.timed_output_file).
std::optional<Measurement> JudgeTimedOutputs(const JudgeContext& context, const Job& time, const JobResult& result,
                                             const std::filesystem::path& reference_timed_outputs,
                                             const std::string& log);

// `clock` opens the samples' note ("CUDA events; " or ""); `flushed` names
// what was flushed before each sample ("caches", "L2").
Measurement JudgeTimings(const JudgeContext& context, JobResult& timed, const std::string& clock,
                         const std::string& flushed, const std::string& log);

// The reference's files an evaluation compares against.
struct ReferenceOutputs {
  std::filesystem::path outputs;        // every shape and input set
  std::filesystem::path timed_outputs;  // the timing buffer sets; empty: no re-check
};

struct Judged {
  Measurement measurement;  // `measured`, or the verdict that ended the evaluation (its log complete)
  std::string runner_log;   // for a measured one: the runner's output, to append to its log
};

// 1. `outputs` (its output_file set by this function) run and judged;
// 2. `time` run, the outputs it produced while timed re-checked, and its
// samples judged. `run_job` runs one job in `dir` (runner_job.h), a fresh
// folder of the evaluation's own, removed when this returns.
using RunJobFunction = std::function<JobRun(const Job&, const std::filesystem::path&, const std::string&)>;
Judged CheckAndTime(const JudgeContext& context, const RunJobFunction& run_job, Job outputs, Job time,
                    const std::filesystem::path& dir, const ReferenceOutputs& reference, const std::string& clock,
                    const std::string& flushed);

// The same evaluation as one "evaluate" job (job.h): the runner checks the
// outputs, compares them with reference.outputs and times the candidate
// only when they pass. Judged in the same order: the checks first (even
// when the job ended in a verdict while timing), then the verdict, the
// timed outputs and the samples.
Judged CheckAndTimeInOneJob(const JudgeContext& context, const RunJobFunction& run_job, const Job& outputs, Job time,
                            const std::filesystem::path& dir, const ReferenceOutputs& reference,
                            const std::string& clock, const std::string& flushed);

}  // namespace kestrel
