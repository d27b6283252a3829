#pragma once
// One job of a runner process (kestrel-runner, kestrel-cuda-runner; see
// job.h for the protocol), and the verdict on how it ended. Shared by the
// cpu and cuda evaluators, which differ only in the process they start and
// its limits.
//
// The job is written to dir/<mode>.json with a fresh nonce; the runner runs
// here (RunSubprocess, its result on a pipe) or, with the Slurm executor, as
// a Slurm job (RunAsSlurmJob, its result in a file of the shared folder).
// Either way: a wall-clock timeout or a CPU-time limit is `timed_out`; a
// SIGSYS is the sandbox refusing a system call (`rejected`); another signal,
// a nonzero exit, a job Slurm lost, or no result is `crashed`; a result
// that does not parse, is oversized or does not echo the nonce is
// `rejected` (a protocol violation); a result carrying an error is
// `crashed` with that error.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/measurement.h"
#include "evaluators/job.h"
#include "evaluators/slurm_job.h"

namespace kestrel {

inline constexpr double kRunnerCpuSlackSeconds = 5;  // CPU time beyond the wall clock's worth

struct RunnerProcess {
  std::string name = "kestrel-runner";   // for messages
  // The command line before the job file: the runner, or a sandbox wrapping it.
  std::vector<std::string> argv;
  std::vector<std::string> env;          // "NAME=value" overrides of the environment
  double timeout_s = 60;
  double cpu_limit_s = 0;                // the wall clock times the threads, plus kRunnerCpuSlackSeconds
  std::uint64_t memory_limit_bytes = 0;
  std::uint64_t file_size_limit_bytes = 1ULL << 30;  // raised to twice an outputs job's output
  bool bwrap = false;  // argv is bwrap's: its exit 128 + N is the runner's death by signal N
  // Non-null and enabled: run as a Slurm job; slurm_limit_s is its time limit in seconds.
  const SlurmOptions* slurm = nullptr;
  double slurm_limit_s = 0;
};

// The parsed result, or the Measurement that ends the evaluation.
struct JobRun {
  std::optional<Measurement> failure;
  JobResult result;
  std::string log;  // the runner's output, trimmed
};

// `phase` words the verdicts: "checking outputs", "timing", ...
JobRun RunRunnerJob(const RunnerProcess& process, const Job& job, const std::filesystem::path& dir,
                    const std::string& phase);

// `<argv> --host` (in `dir`, made if missing), here or as a Slurm job: the
// HostInfo of the machine the runner's jobs run on. An error says why the
// probe failed (for Slurm: the job's end and output).
Result<HostInfo> ProbeHost(const RunnerProcess& process, const std::filesystem::path& dir);

}  // namespace kestrel
