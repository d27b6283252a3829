#pragma once
// The Slurm executor (docs/SLURM.md): each program an evaluator runs is a
// Slurm batch job. `sbatch` submits it, and `scontrol show job`, polled every
// 0.1 s to 1 s, says when and how it ended (COMPLETED, FAILED, TIMEOUT,
// CANCELLED, NODE_FAIL, ...). The job's folder (the program's cwd) must be on
// a filesystem the compute nodes share with this host.
//
// The three Slurm commands are behind SlurmClient, so that how a job's end
// maps onto a SubprocessResult is tested with a fake (no Slurm, no root).

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "evaluators/executor.h"

namespace kestrel {

struct SlurmOptions {
  std::string partition;              // --partition; empty: the cluster's default
  std::string gres;                   // --gres, e.g. "gpu:1"; empty: none
  std::string time_limit = "10:00";   // --time (Slurm's formats: "30", "10:00", "1:00:00", "1-0")
  std::filesystem::path shared_dir;   // the evaluator's work dir is made here
  std::vector<std::string> sbatch_args;  // any further sbatch options
  // The longest a job may wait in the queue (PENDING, CONFIGURING, REQUEUED)
  // before it runs; then it is scancelled and lost. A Slurm time.
  std::string queue_limit = "1:00:00";
  // The pause before submitting a lost job again, times the submissions so
  // far (not in the run config; tests shorten it).
  double resubmit_pause_s = 1.0;
};

// What sbatch said: the job's id, or "" when it refused the job.
struct SlurmSubmission {
  std::string job_id;
  std::string log;  // sbatch's output
};

// A job as `scontrol show job` describes it.
struct SlurmJobState {
  std::string state;      // JobState ("PENDING", "COMPLETED", "TIMEOUT", ...)
  std::string exit_code;  // ExitCode, "0:0" (status:signal)
  std::string node;       // NodeList: where it ran
  std::string run_time;   // RunTime ("00:00:05")
  std::string reason;     // Reason ("TimeLimit", "None", ...)
};

// sbatch, scontrol and scancel. Thread-safe.
class SlurmClient {
 public:
  virtual ~SlurmClient() = default;
  // `sbatch --parsable <options> --wrap=<script>` run in `dir`. An error
  // only when sbatch cannot be started at all.
  virtual Result<SlurmSubmission> Submit(const std::vector<std::string>& options, const std::string& script,
                                         const std::filesystem::path& dir) const = 0;
  // The job's state now; nullopt when scontrol could not say (asked again later).
  virtual std::optional<SlurmJobState> Show(const std::string& job_id) const = 0;
  virtual void Cancel(const std::string& job_id) const = 0;
};

// The real commands, found in $PATH; an InvalidArgument error when sbatch is
// not installed.
Result<std::shared_ptr<const SlurmClient>> MakeSlurmCommands();

// Checks the options first: the time and queue limits parse, shared_dir is
// set (and is made); InvalidArgument naming the field otherwise. `client`
// null: the real commands (MakeSlurmCommands).
//
// Run does what RunSubprocess does, as a job: the job script applies the
// same limits (prlimit: CPU time, address space, file size), runs the
// program under `timeout` for its wall-clock limit (the whole process group
// is signalled), with the entries of process.env that differ from this
// process's environment, process.stdin_data from <cwd>/<stem>.in (created
// afresh, owner-only) and fd 3 into <cwd>/<stem>.result, read back into
// `result` once the job has ended; its output is <cwd>/<stem>.out. The job's
// end maps onto the SubprocessResult: its exit status and signal; timed_out
// for `timeout`'s 124 (or a SIGKILL at or after the limit) and for Slurm's
// TIMEOUT; `lost` for a job Slurm ended itself (timed out, cancelled, node
// failure, out of memory, never submitted), one that waited in the queue
// past queue_limit, or one that did not end within process.timeout_s plus
// the time limit of starting (those two are scancelled); `job` names it
// ("Slurm job 12 on node1"). A job the cluster lost through no fault of the
// program (sbatch refused it, NODE_FAIL, BOOT_FAIL, PREEMPTED, cancelled by
// someone else) is submitted again, twice at most; the log says so.
// Waiting in the queue counts for no limit of the program's.
Result<std::shared_ptr<const Executor>> MakeSlurmExecutor(const SlurmOptions& options,
                                                          std::shared_ptr<const SlurmClient> client = nullptr);

// Seconds of a Slurm time limit ("30" minutes, "10:00", "1:00:00", "2-0",
// "1-12:30"); InvalidArgument for anything else.
Result<double> ParseSlurmTime(const std::string& text, const std::string& field = "executor.time_limit");

// "'a b' 'it'\''s'": argv as one POSIX shell command line.
std::string ShellQuote(const std::vector<std::string>& argv);

}  // namespace kestrel
