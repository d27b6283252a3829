#pragma once
// The runner's jobs (see evaluators/job.h for the protocol).
//
// The supervisor (kestrel-runner) never calls a kernel itself: each runs in
// its own worker (runner/worker_process.h), which calls it on memory the
// supervisor prepared before the call and inspects after it. Inputs come
// from the run's prepared inputs (runner/prepared_inputs.h).
//
// CheckOutputs (outputs mode): for every shape and input set, have the
// kernel called on pristine inputs with poisoned outputs, record whether it
// modified an input, have it called again on the same inputs with
// differently poisoned outputs and record whether the output bytes differ,
// and append the first call's outputs to job.output_file in OutputSegments
// order.
//
// TimeShapes (time mode): time candidate (libraries[0]) and reference
// (libraries[1]), each in its own worker, on every shape, interleaved
// sample by sample, and report seconds per call by the supervisor's clock.
// Every candidate call's outputs are poisoned before it and every round's
// inputs and inouts are drawn afresh, in part or in full (fresh_inputs.h);
// the first call on each buffer set gives the kernel's outputs (compared
// here with those of job.reference_timed_output_file, and written to
// job.timed_output_file when set, for the engine to compare), and randomly
// chosen timed calls must match the reference's on the same inputs within
// job.rtol and job.atol.
//
// RunEvaluate (evaluate mode): CheckOutputs and then, in the same
// candidate worker, TimeShapes on the leading job.timed_shapes shapes;
// timing is skipped when the check already shows the kernel wrong (an input
// modified, two calls differing, or an output out of tolerance of
// job.reference_output_file), which the engine then reports from the
// checks.
//
// Each fills `result`: how a worker ended the job early is its verdict
// (JobResult::verdict). They return an error only when the supervisor
// cannot do the job (a worker cannot be started, a file cannot be written
// or read).

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/error.h"
#include "evaluators/job.h"
#include "evaluators/runner/prepared_inputs.h"
#include "evaluators/runner/shared_region.h"
#include "evaluators/runner/worker_process.h"

namespace kestrel::runner {

// What a supervisor kept for the whole run (kestrel-runner --serve,
// runner/serve.h) keeps from one job to the next, so that it and the
// reference's worker touch their memory once, not once per candidate (on a
// virtual machine a process's first access to a page costs microseconds):
// the reference's worker and its arena, and the sealed inputs region, all
// for as long as the jobs are alike (`key`: the reference, its worker's
// options, the regions' sizes); and the candidates' arena, cleared before
// every job. No candidate ever sees either of the reference's, and the
// inputs region is sealed against every worker.
struct Session {
  std::string key;
  std::optional<SharedRegion> inputs;
  std::optional<SharedRegion> reference_arena;
  std::unique_ptr<WorkerProcess> reference;
  std::map<std::string, double> reference_per_call;  // TimingWorkers::reference_per_call
  std::optional<SharedRegion> candidate_arena;
  // Drops the reference's worker first (it maps the regions), then the regions.
  void Reset() {
    reference.reset();
    reference_arena.reset();
    inputs.reset();
    reference_per_call.clear();
    key.clear();
  }
};

Status RunOutputs(const Job& job, JobResult& result);
// `session`: null for a job run by a supervisor of its own.
Status RunTiming(const Job& job, JobResult& result, Session* session = nullptr);
Status RunEvaluate(const Job& job, JobResult& result, Session* session = nullptr);

// How a step ended early: the worker's verdict, and whose worker it was.
struct Stop {
  WorkerVerdict verdict;
  std::string role;  // "candidate" or "reference"
};
using Step = Result<std::optional<Stop>>;

// The candidate's arena for CheckOutputs: every argument of the largest shape.
std::uint64_t CheckArenaBytes(const Job& job);
struct CheckSummary {
  bool wrong = false;  // an input modified, two calls differing, or not passing the comparison
};
// The first call's outputs go to job.output_file when it is set, and, with
// `reference` (the reference's outputs in OutputSegments order), are
// compared with them in memory (compare.h): result.outputs_compared.
Step CheckOutputs(const Job& job, const PreparedInputs& inputs, WorkerProcess& worker, SharedRegion& arena,
                  const std::byte* reference, JobResult& result, CheckSummary& summary);

// The regions TimeShapes needs: the sealed inputs region, and each
// kernel's arena of call slots.
struct TimingSizes {
  std::uint64_t inputs = 0;
  std::uint64_t arena = 64;
};
TimingSizes TimingSizesOf(const Job& job);
struct TimingWorkers {
  WorkerProcess& candidate;
  SharedRegion& candidate_arena;
  WorkerProcess& reference;
  SharedRegion& reference_arena;
  SharedRegion& inputs;  // sealed: read-only in the workers
  // A session's record of the reference's seconds per call on each shape
  // (the fastest of its samples in the last job): with one, the reference's
  // warm-up call is skipped and that is its estimate. Null: none kept.
  std::map<std::string, double>* reference_per_call = nullptr;
};
Step TimeShapes(const Job& job, const PreparedInputs& prepared, const TimingWorkers& workers, JobResult& result);

}  // namespace kestrel::runner
