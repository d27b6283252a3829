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
#ifndef KESTREL_CONFINE_BUILD_PATH
#define KESTREL_CONFINE_BUILD_PATH ""
#endif
#ifndef KESTREL_WORKER_BUILD_PATH
#define KESTREL_WORKER_BUILD_PATH ""
#endif

bool IsExecutable(const std::filesystem::path& path) {
  std::error_code error;
  return !path.empty() && std::filesystem::is_regular_file(path, error) && ::access(path.c_str(), X_OK) == 0;
}

// `name` next to /proc/self/exe, else in $`variable`, else the build tree's.
Result<std::filesystem::path> FindHelper(const std::string& name, const char* variable, const char* build_path) {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error && IsExecutable(self.parent_path() / name)) return self.parent_path() / name;
  if (const char* env = std::getenv(variable); env != nullptr && IsExecutable(env)) return std::filesystem::path(env);
  if (IsExecutable(build_path)) return std::filesystem::path(build_path);
  return Fail(Error::NotFound(name + " not found next to the executable, in $" + variable + " or in the build tree"));
}

}  // namespace

Result<std::filesystem::path> DefaultRunnerPath() {
  auto found = FindHelper("kestrel-runner", "KESTREL_RUNNER", KESTREL_RUNNER_BUILD_PATH);
  if (!found) return Fail(Error::NotFound(found.error().message() + "; set the evaluator's runner_path"));
  return found;
}

Result<std::filesystem::path> DefaultWorkerPath() {
  return FindHelper("kestrel-worker", "KESTREL_WORKER", KESTREL_WORKER_BUILD_PATH);
}

Result<std::filesystem::path> DefaultConfinePath() {
  return FindHelper("kestrel-confine", "KESTREL_CONFINE", KESTREL_CONFINE_BUILD_PATH);
}

Job CpuEvaluator::MakeJob(const std::string& mode, std::vector<std::filesystem::path> libraries,
                          bool timed_only) const {
  Job job;
  job.mode = mode;
  job.libraries = std::move(libraries);
  job.seed = options_.measure.seed;
  job.input_sets = options_.measure.input_sets;
  job.shapes = timed_only ? timed_shapes_ : all_shapes_;
  if (!timed_only) job.inputs_file = inputs_file_;  // prepared for every shape
  job.min_time_s = options_.measure.min_time_s;
  job.min_samples = options_.measure.min_samples;
  job.buffer_sets = std::min(2, options_.measure.input_sets);
  if (options_.flush_cache) {
    // Twice the last-level cache, at most 128 MiB (a virtual machine may
    // report a whole socket's L3, far more than one core's share); 64 MiB
    // when its size is unknown.
    const std::int64_t llc = host_.l3_bytes > 0 ? host_.l3_bytes : host_.l2_bytes;
    job.flush_bytes = llc > 0 ? std::min(2 * llc, std::int64_t{128} << 20) : std::int64_t{64} << 20;
  }
  job.worker = worker_;
  job.rtol = task_.tolerance.rtol;
  job.atol = task_.tolerance.atol;
  job.bwrap = sandbox_.bwrap && !sandbox_.unconfined ? sandbox_.bwrap_path : "";
  job.seccomp = sandbox_.seccomp && !sandbox_.unconfined;
  job.allow_threads = options_.threads > 1;
  const std::string threads = std::to_string(std::max(1, options_.threads));
  // All a kernel's process knows of ours: its thread counts.
  job.worker_env = {"OMP_NUM_THREADS=" + threads, "MKL_NUM_THREADS=" + threads, "OPENBLAS_NUM_THREADS=" + threads,
                    "OMP_WAIT_POLICY=PASSIVE"};
  return job;
}

RunnerProcess CpuEvaluator::Process(const std::filesystem::path& dir) const {
  const std::string threads = std::to_string(std::max(1, options_.threads));
  RunnerProcess process;
  (void)dir;
  process.argv = {runner_.string()};
  // The supervisor gets no more of our environment than it needs: never a
  // provider's API key.
  process.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "OMP_NUM_THREADS=" + threads,
                 "MKL_NUM_THREADS=" + threads, "OPENBLAS_NUM_THREADS=" + threads};
  process.timeout_s = options_.measure.run_timeout_s;
  process.cpu_limit_s = options_.measure.run_timeout_s * std::max(1, options_.threads) + kRunnerCpuSlackSeconds;
  process.memory_limit_bytes =
      host_.memory_bytes > 0 ? std::min(kRunnerMemoryBytes, static_cast<std::uint64_t>(host_.memory_bytes) / 4 * 3)
                             : kRunnerMemoryBytes;
  return process;
}

JobRun CpuEvaluator::RunJob(const Job& job, const std::filesystem::path& dir, const std::string& phase,
                            bool kept) const {
  return RunRunnerJob(*options_.executor, Process(dir), job, dir, phase, kept ? pool_.get() : nullptr);
}

}  // namespace kestrel
