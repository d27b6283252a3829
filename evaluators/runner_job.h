#pragma once
// One job of a runner process (kestrel-runner, kestrel-cuda-runner; see
// job.h for the protocol), and the verdict on how it ended. Shared by the
// cpu and cuda evaluators, which differ only in the process they start and
// its limits.
//
// The job, with a fresh nonce, goes to the runner on its stdin; the runner
// runs on an Executor (here: its result on a pipe; a Slurm job: its stdin
// and result in files of the shared folder). The verdict:
// the supervisor's own on a kernel's worker (JobResult::verdict) when it
// gives one; else a wall-clock timeout or a CPU-time limit is `timed_out`;
// a signal, a nonzero exit, a job Slurm lost, or no result is `crashed`; a
// result that does not parse, is oversized or does not echo the nonce is
// `rejected` (a protocol violation); a result carrying an error is
// `crashed` with that error.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/measurement.h"
#include "evaluators/job.h"
#include "evaluators/executor.h"

namespace kestrel {

class RunnerPool;

inline constexpr double kRunnerCpuSlackSeconds = 5;  // CPU time beyond the wall clock's worth

struct RunnerProcess {
  std::string name = "kestrel-runner";   // for messages
  // The command line before the job file: the runner, or a sandbox wrapping it.
  std::vector<std::string> argv;
  std::vector<std::string> env;          // its whole environment ("NAME=value"); empty: inherit ours
  bool bubblewrapped = false;            // argv starts with bubblewrap (sandbox_args.h)
  double timeout_s = 60;
  double cpu_limit_s = 0;                // the wall clock times the threads, plus kRunnerCpuSlackSeconds
  std::uint64_t memory_limit_bytes = 0;
  std::uint64_t file_size_limit_bytes = 1ULL << 30;  // raised to twice an outputs job's output
};

// The parsed result, or the Measurement that ends the evaluation.
struct JobRun {
  std::optional<Measurement> failure;
  JobResult result;
  std::string log;  // the runner's output, trimmed
};

// `phase` words the verdicts: "checking outputs", "timing", ... With a
// `pool`, a supervisor it keeps runs the job (runner_pool.h); else one of
// its own, on `executor`.
JobRun RunRunnerJob(const Executor& executor, const RunnerProcess& process, const Job& job,
                    const std::filesystem::path& dir, const std::string& phase, RunnerPool* pool = nullptr);

// `<argv> --host` (in `dir`, made if missing) on `executor`: the HostInfo of
// the machine the runner's jobs run on. An error says why the probe failed
// (for Slurm: the job's end and output).
Result<HostInfo> ProbeHost(const Executor& executor, const RunnerProcess& process, const std::filesystem::path& dir);

}  // namespace kestrel
