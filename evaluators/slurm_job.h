#pragma once
// One command run as a Slurm batch job (docs/SLURM.md): `sbatch --wait`
// submits it and blocks until it ends; `scontrol show job` then says how it
// ended (COMPLETED, FAILED, TIMEOUT, CANCELLED, NODE_FAIL, ...). Used by the
// command evaluator for its run step when the run config has an executor of
// kind "slurm". The job's folder must be on a filesystem the compute nodes
// share with this host.

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"

namespace kestrel {

struct SlurmOptions {
  bool enabled = false;
  std::string partition;              // --partition; empty: the cluster's default
  std::string gres;                   // --gres, e.g. "gpu:1"; empty: none
  std::string time_limit = "10:00";   // --time (Slurm's formats: "30", "10:00", "1:00:00", "1-0")
  std::filesystem::path shared_dir;   // the evaluator's work dir is made here
  std::vector<std::string> sbatch_args;  // any further sbatch options
};

struct SlurmJobResult {
  std::string job_id;      // empty: sbatch could not submit
  std::string state;       // JobState from scontrol ("COMPLETED", "TIMEOUT", ...); "" when unknown
  std::string exit_code;   // "0:0" (status:signal) from scontrol
  bool waited_too_long = false;  // our own wall-clock limit passed; the job was scancelled
  std::string log;         // what sbatch said, then the job's output file
};

// Seconds of a Slurm time limit ("30" minutes, "10:00", "1:00:00", "2-0",
// "1-12:30"); InvalidArgument for anything else.
Result<double> ParseSlurmTime(const std::string& text);

// "'a b' 'it'\''s'": argv as one POSIX shell command line.
std::string ShellQuote(const std::vector<std::string>& argv);

// Submits `argv` to run in `dir` (output in dir/slurm.out) and waits for it,
// at most `wall_timeout_s` (then scancel). An error only when sbatch cannot
// be started at all.
Result<SlurmJobResult> RunSlurmJob(const SlurmOptions& options, const std::vector<std::string>& argv,
                                   const std::filesystem::path& dir, double wall_timeout_s);

}  // namespace kestrel
