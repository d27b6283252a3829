#pragma once
// The runner's two jobs (see evaluators/job.h for the protocol).
//
// The supervisor (kestrel-runner) never calls a kernel itself: each runs in
// its own worker (runner/worker_process.h), which calls it on memory the
// supervisor prepared before the call and inspects after it.
//
// RunOutputs: for every shape and input set, have the kernel called on fresh
// inputs with poisoned outputs, record whether it modified an input, have it
// called again on the same inputs with differently poisoned outputs and
// record whether the output bytes differ, and append the first call's
// outputs to job.output_file in OutputSegments order.
//
// RunTiming: time candidate (libraries[0]) and reference (libraries[1]),
// each in its own worker, on every shape, interleaved sample by sample, and
// report seconds per call by the supervisor's clock. Every call's outputs
// are poisoned before it and every round's inputs are partly drawn afresh;
// the first call on each buffer set gives the kernel's outputs (with
// job.timed_output_file, written there in the layout of job.h for the engine
// to compare with the reference's), and randomly chosen timed calls must
// match the reference's on the same inputs within job.rtol and job.atol.
//
// Both fill `result`: how a worker ended the job early is its verdict
// (JobResult::verdict). They return an error only when the supervisor
// cannot do the job (a worker cannot be started, a file cannot be written).

#include "core/error.h"
#include "evaluators/job.h"

namespace kestrel::runner {

Status RunOutputs(const Job& job, JobResult& result);
Status RunTiming(const Job& job, JobResult& result);

}  // namespace kestrel::runner
