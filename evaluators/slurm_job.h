#pragma once
// One command run as a Slurm batch job (docs/SLURM.md): `sbatch` submits
// it, and `scontrol show job`, polled every 0.1 s to 1 s, says when and how it
// ended (COMPLETED, FAILED, TIMEOUT, CANCELLED, NODE_FAIL, ...). Used, when
// the run config has an executor of kind "slurm", by the command evaluator
// for its run command and by the cpu and cuda evaluators for their runner
// (RunAsSlurmJob). The job's folder must be on a filesystem the compute
// nodes share with this host.

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"
#include "evaluators/subprocess.h"

namespace kestrel {

struct SlurmOptions {
  bool enabled = false;
  std::string partition;              // --partition; empty: the cluster's default
  std::string gres;                   // --gres, e.g. "gpu:1"; empty: none
  std::string time_limit = "10:00";   // --time (Slurm's formats: "30", "10:00", "1:00:00", "1-0")
  std::filesystem::path shared_dir;   // the evaluator's work dir is made here
  std::vector<std::string> sbatch_args;  // any further sbatch options
  bool builds = false;                // the builds (compiler, nvcc, build command) are jobs too
};

struct SlurmJobResult {
  std::string job_id;      // empty: sbatch could not submit
  std::string state;       // JobState from scontrol ("COMPLETED", "TIMEOUT", ...); "" when unknown
  std::string exit_code;   // "0:0" (status:signal) from scontrol
  std::string node;        // NodeList from scontrol: where it ran
  std::string run_time;    // RunTime from scontrol ("00:00:05")
  bool waited_too_long = false;  // our own wall-clock limit passed; the job was scancelled
  std::string log;         // what sbatch said, then the job's output file
  std::string output;      // the job's output file alone (stdout and stderr), trimmed
};

// Checks an enabled executor before the first job: its time limit parses,
// shared_dir is set (and is made), sbatch is installed. Returns the time
// limit in seconds; InvalidArgument naming the field otherwise.
Result<double> CheckSlurmOptions(const SlurmOptions& options);

// RunSubprocess(process), or RunAsSlurmJob when `slurm` is non-null and
// enabled: where an evaluator runs a program its executor decides about.
Result<SubprocessResult> RunWith(const SlurmOptions* slurm, double slurm_limit_s, const SubprocessOptions& process,
                                 const std::string& stem);

// An evaluator's work dir: `requested` (made if missing, kept), or a fresh
// folder "<prefix>-XXXXXX" (owned: the evaluator removes it) under
// slurm.shared_dir when the executor is enabled (the nodes must see it),
// else under $TMPDIR. An enabled executor is checked first
// (CheckSlurmOptions); its time limit in seconds comes back with the dir.
struct WorkDir {
  std::filesystem::path path;
  bool owned = false;
  double slurm_limit_s = 0;
};
Result<WorkDir> PrepareWorkDir(const std::filesystem::path& requested, const SlurmOptions& slurm,
                               const std::string& prefix);

// Seconds of a Slurm time limit ("30" minutes, "10:00", "1:00:00", "2-0",
// "1-12:30"); InvalidArgument for anything else.
Result<double> ParseSlurmTime(const std::string& text);

// "'a b' 'it'\''s'": argv as one POSIX shell command line.
std::string ShellQuote(const std::vector<std::string>& argv);

// Submits `argv` as job "kestrel-<stem>" to run in `dir` (output in
// dir/<stem>.out) and waits for
// it, at most `wall_timeout_s` (then scancel). An error only when sbatch
// cannot be started at all.
Result<SlurmJobResult> RunSlurmJob(const SlurmOptions& options, const std::vector<std::string>& argv,
                                   const std::filesystem::path& dir, double wall_timeout_s,
                                   const std::string& stem = "run");

// What RunSubprocess(process) does, as a Slurm job: the job script applies
// the same limits (prlimit: CPU time, address space, file size), runs the
// program under `timeout` for its wall-clock limit (the whole process group
// is signalled), with the entries of process.env that differ from this
// process's environment, and sends fd 3 (result_pipe) to dir/<stem>.result,
// read back into `result` once the job has ended. process.cwd is the job's
// folder (it must be shared). The job's end maps onto the SubprocessResult:
// its exit status and signal; timed_out for `timeout`'s 124 (or a SIGKILL
// at or after the limit) and for Slurm's TIMEOUT; `lost` for a job Slurm
// ended itself (cancelled, node failure, out of memory, never submitted);
// `job` names it ("Slurm job 12 on node1"). `slurm_limit_s` is the parsed
// options.time_limit: the wait is bounded by the queue plus the run.
Result<SubprocessResult> RunAsSlurmJob(const SlurmOptions& options, const SubprocessOptions& process,
                                       const std::string& stem, double slurm_limit_s);

}  // namespace kestrel
