#pragma once
// The CUDA evaluator: kernels of tasks with "language": "cuda" (docs/CUDA.md).
//
// A CUDA task's entry is a HOST function with the same signature rule as a
// CPU task's (input -> const T*, output/inout -> T*, dim -> int64_t,
// scalar -> T) whose pointer arguments are DEVICE pointers; it launches its
// kernels on the default stream. The kernel (kernel.cu) is included by the
// generated shim (shim.cu, evaluators/shim.h) and built by nvcc into a shared
// object exporting kestrel_entry; kestrel-cuda-runner (evaluators/cuda_runner/)
// loads it and speaks the job protocol of evaluators/job.h.
//
// The correctness protocol is the CPU evaluator's: NaN-poisoned outputs,
// inputs checked unchanged, two calls that must agree, several freshly seeded
// input sets, outputs compared with the reference's (evaluators/compare.h).
// Timing uses CUDA events after a device-wide sync, with the L2 flushed and
// the persisting-L2 carve-out reset before each sample.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/task.h"
#include "evaluators/evaluator.h"

namespace kestrel {

struct CudaEvaluatorOptions {
  std::string nvcc;               // empty: /usr/local/cuda/bin/nvcc when it exists, else "nvcc" in $PATH
  std::string arch = "sm_90";     // -arch=<arch> (sm_90: H100/H200)
  std::vector<std::string> flags = {"-O3"};
  MeasureOptions measure{.run_timeout_s = 120};
  bool flush_l2 = true;           // write over 2x the device's L2 before each sample
  double build_timeout_s = 300;   // nvcc wall clock
  std::filesystem::path work_dir;     // scratch; default: a fresh dir under the executor's ScratchRoot()
  std::filesystem::path runner_path;  // kestrel-cuda-runner; default: DefaultCudaRunnerPath()
  // Where the device probe and every runner job run (a Slurm executor:
  // docs/SLURM.md; gres "gpu:1" gives each its GPU) and where nvcc runs.
  std::shared_ptr<const Executor> executor = LocalExecutor();
  std::shared_ptr<const Executor> build_executor = LocalExecutor();
  // The runner's sandbox (sandbox_args.h, ProgramSandboxArgs): "auto"
  // (bubblewrap when it works here) or "none". It sees the runner, the
  // job's kernels, its evaluation folder, /usr, /sys and the GPU's device
  // nodes; `binds` adds read-only paths, `pass_env` variables
  // (CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER always pass).
  std::string sandbox = "auto";
  std::vector<std::string> binds;
  std::vector<std::string> pass_env;
};

// Builds the task's reference with nvcc, runs it on the GPU on every shape
// and input set, and returns the evaluator. Errors: InvalidArgument for a
// task that is not a cuda task or a reference that does not compile or run;
// Unsupported ("... no CUDA device found ...") on a host without a usable
// GPU; NotFound when nvcc or kestrel-cuda-runner cannot be found.
Result<std::unique_ptr<Evaluator>> MakeCudaEvaluator(const Task& task, const CudaEvaluatorOptions& options);

// What `kestrel doctor` reports about CUDA.
struct CudaDeviceReport {
  bool nvcc_found = false;
  std::string nvcc_version;  // the last line of `nvcc --version` ("Build cuda_13.0...")
  int devices = 0;           // cudaGetDeviceCount; 0 when none or on error
  std::string detail;        // device 0's name, compute capability and L2, or why there is none
  std::int64_t l2_bytes = 0; // device 0's L2 size
  HostInfo host;             // the machine the probe ran on (a compute node under Slurm)
};
// `nvcc` empty: the default of CudaEvaluatorOptions. Runs kestrel-cuda-runner
// --probe (the engine itself never links libcudart). Never throws.
CudaDeviceReport DetectCuda(const std::string& nvcc = "");
// The device part of DetectCuda with a given runner (nvcc fields left empty),
// run by `executor` in `dir`: under Slurm, a compute node's devices.
// `sandbox`: the command line the runner runs under (empty: none).
CudaDeviceReport ProbeCudaDevices(const std::filesystem::path& runner, const Executor& executor = *LocalExecutor(),
                                  const std::filesystem::path& dir = {}, const std::vector<std::string>& sandbox = {});

// The last non-empty line of `nvcc --version` ("Build cuda_13.0..."): the
// release that goes into the toolchain and `kestrel doctor`.
std::string NvccRelease(const std::string& version_output);

// The nvcc an empty CudaEvaluatorOptions::nvcc means.
std::string DefaultNvcc();

// Where kestrel-cuda-runner is: next to /proc/self/exe, else
// $KESTREL_CUDA_RUNNER, else the build tree's. NotFound when it was not built
// (no CUDA toolkit at configure time).
Result<std::filesystem::path> DefaultCudaRunnerPath();

// One nvcc invocation (evaluators/cuda_build.cc):
//   <nvcc> -std=c++17 <flags> -Xcompiler -fPIC -shared -cudart shared
//          -arch=<arch> [-Xlinker -rpath,<cuda lib dir>] -o <library> <source>
// run in the source's directory with LC_ALL=C; the library is written under a
// temporary name and renamed. Never throws: a compile error, a missing nvcc or
// a timeout is a !ok BuildResult whose log is the trimmed nvcc output.
struct CudaCompileRequest {
  std::string nvcc;                // empty: DefaultNvcc()
  std::string arch = "sm_90";
  std::vector<std::string> flags;  // user flags and -DKNOB=value defines
  std::filesystem::path source;    // the shim (shim.cu), which includes kernel.cu
  std::filesystem::path library;   // the shared object to produce
  double timeout_s = 300;
  std::shared_ptr<const Executor> executor = LocalExecutor();  // where nvcc runs
  std::string bwrap;  // nvcc runs in the compiler's sandbox (CompilerSandboxArgs); empty: none
};
BuildResult CompileCudaLibrary(const CudaCompileRequest& request);

// Writes dir/kernel.cu (the candidate's source) and dir/shim.cu, and builds
// dir/kernel.so with the candidate's flags (or `flags` when it has none) and
// knob defines. Reuses an existing dir/kernel.so.
BuildResult BuildCudaCandidate(const Task& task, const Candidate& candidate, const std::filesystem::path& dir,
                               const std::string& nvcc, const std::string& arch,
                               const std::vector<std::string>& flags, double timeout_s,
                               std::shared_ptr<const Executor> executor = LocalExecutor(),
                               const std::string& bwrap = "");

}  // namespace kestrel
