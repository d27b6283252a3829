#pragma once
// The runner's two jobs (see evaluators/job.h for the protocol).
//
// RunOutputs: for every shape and input set, call the kernel on fresh inputs
// with poisoned outputs, record whether it modified an input, call it again
// on the same inputs with differently poisoned outputs and record whether the
// output bytes differ, and append the first call's outputs to
// job.output_file in OutputSegments order.
//
// RunTiming: time candidate (libraries[0]) and reference (libraries[1]) on
// every shape, interleaved sample by sample, and report seconds per call;
// with job.timed_output_file, also the candidate's outputs of one more call
// per buffer set after each shape's timing (see job.h).
//
// Both fill `result` and return an error only when the job cannot be done
// (a library does not load, the output file cannot be written).

#include "core/error.h"
#include "evaluators/job.h"

namespace kestrel::runner {

Status RunOutputs(const Job& job, JobResult& result);
Status RunTiming(const Job& job, JobResult& result);

}  // namespace kestrel::runner
