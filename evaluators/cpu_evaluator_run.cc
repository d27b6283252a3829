// CpuEvaluator: the runner's jobs and process (where kestrel-runner is, the
// jobs it is given, its sandbox, environment and limits); runner_job.h runs
// them and judges how they ended. See cpu_evaluator.h.

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>

#include "evaluators/verdict.h"
#include "evaluators/compare.h"
#include "evaluators/cpu_evaluator.h"
#include "evaluators/runner_job.h"
#include "evaluators/subprocess.h"

namespace kestrel {
namespace {

constexpr std::uint64_t kRunnerMemoryBytes = 16ULL << 30;  // RLIMIT_AS, capped by 3/4 of RAM

#ifndef KESTREL_RUNNER_BUILD_PATH
#define KESTREL_RUNNER_BUILD_PATH ""
#endif

bool IsExecutable(const std::filesystem::path& path) {
  std::error_code error;
  return !path.empty() && std::filesystem::is_regular_file(path, error) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

Result<std::filesystem::path> DefaultRunnerPath() {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error && IsExecutable(self.parent_path() / "kestrel-runner")) return self.parent_path() / "kestrel-runner";
  if (const char* env = std::getenv("KESTREL_RUNNER"); env != nullptr && IsExecutable(env)) {
    return std::filesystem::path(env);
  }
  if (IsExecutable(KESTREL_RUNNER_BUILD_PATH)) return std::filesystem::path(KESTREL_RUNNER_BUILD_PATH);
  return Fail(Error::NotFound("kestrel-runner not found next to the executable, in $KESTREL_RUNNER or in the "
                              "build tree; set the evaluator's runner_path"));
}

Job CpuEvaluator::MakeJob(const std::string& mode, std::vector<std::filesystem::path> libraries,
                          bool timed_only) const {
  Job job;
  job.mode = mode;
  job.libraries = std::move(libraries);
  job.seed = options_.seed;
  job.input_sets = options_.input_sets;
  job.shapes = timed_only ? timed_shapes_ : all_shapes_;
  job.min_time_s = options_.min_time_s;
  job.min_samples = options_.min_samples;
  job.buffer_sets = std::min(2, options_.input_sets);
  if (options_.flush_cache) {
    // Twice the last-level cache, at most 128 MiB (a virtual machine may
    // report a whole socket's L3, far more than one core's share); 64 MiB
    // when its size is unknown.
    const std::int64_t llc = host_.l3_bytes > 0 ? host_.l3_bytes : host_.l2_bytes;
    job.flush_bytes = llc > 0 ? std::min(2 * llc, std::int64_t{128} << 20) : std::int64_t{64} << 20;
  }
  job.seccomp = sandbox_.seccomp;
  job.allow_threads = options_.threads > 1;
  return job;
}

RunnerProcess CpuEvaluator::Process(const std::filesystem::path& dir) const {
  const std::string threads = std::to_string(std::max(1, options_.threads));
  RunnerProcess process;
  process.argv = SandboxedArgv(sandbox_, dir, {runner_.string()});
  process.env = {"OMP_NUM_THREADS=" + threads, "MKL_NUM_THREADS=" + threads, "OPENBLAS_NUM_THREADS=" + threads};
  process.timeout_s = options_.run_timeout_s;
  process.cpu_limit_s = options_.run_timeout_s * std::max(1, options_.threads) + kRunnerCpuSlackSeconds;
  process.memory_limit_bytes =
      host_.memory_bytes > 0 ? std::min(kRunnerMemoryBytes, static_cast<std::uint64_t>(host_.memory_bytes) / 4 * 3)
                             : kRunnerMemoryBytes;
  process.bwrap = sandbox_.bwrap;
  process.slurm = &options_.slurm;
  process.slurm_limit_s = slurm_limit_s_;
  return process;
}

JobRun CpuEvaluator::RunJob(const Job& job, const std::filesystem::path& dir, const std::string& phase) const {
  return RunRunnerJob(Process(dir), job, dir, phase);
}

}  // namespace kestrel
