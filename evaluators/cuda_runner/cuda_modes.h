#pragma once
// kestrel-cuda-runner's two jobs, the GPU versions of evaluators/runner/modes.h
// (the same protocol, evaluators/job.h). Host-side inputs come from
// evaluators/runner/inputs.h (bit-identical to the CPU runner's) and are
// copied to device buffers; the entry gets device pointers for buffers and
// host pointers for dims and scalars (the shim dereferences those on the host).
//
// RunCudaOutputs: per shape and input set, outputs poisoned (the host
// poison, NaN for floats, copied over them) before each call; the inputs
// copied back after the first call and compared byte for byte; a second call
// on restored inputs with differently poisoned outputs must give the same
// bytes; the first call's outputs are written in OutputSegments order.
//
// RunCudaTiming: per shape, candidate and reference each on their own
// rotating device buffer sets; after a device-wide sync, each sample is:
// flush the L2 (a cudaMemsetAsync over a buffer of max(job.flush_bytes,
// 2 x cudaDeviceProp::l2CacheSize); skipped when job.flush_bytes is 0),
// reset the persisting-L2 lines, record a start event, call the entry
// `batch` times (batch > 1 only for kernels under kMinSampleSeconds), record
// a stop event, synchronize, cudaEventElapsedTime / batch. Candidate and
// reference samples are interleaved.
//
// A CUDA error (a failed launch, an illegal address) throws CudaFailure,
// which the runner's main turns into the result's error.

#include <stdexcept>
#include <string>

#include "core/error.h"
#include "evaluators/job.h"

namespace kestrel::cuda_runner {

struct CudaFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

Status RunCudaOutputs(const Job& job, JobResult& result);
Status RunCudaTiming(const Job& job, JobResult& result);

}  // namespace kestrel::cuda_runner
