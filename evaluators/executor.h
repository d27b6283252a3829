#pragma once
// Executor: where an evaluator's programs run (docs/SLURM.md). The compiler,
// nvcc, the runner's jobs, the host and device probes, the calibration and
// the command evaluator's commands all go through one, so an evaluator does
// not know whether a program runs here (LocalExecutor: RunSubprocess) or as
// a Slurm batch job (MakeSlurmExecutor, slurm_executor.h).
//
// Thread-safety: Run may be called from several threads at once.

#include <filesystem>
#include <memory>
#include <string>

#include "core/error.h"
#include "evaluators/subprocess.h"

namespace kestrel {

class Executor {
 public:
  virtual ~Executor() = default;
  // RunSubprocess's contract (subprocess.h), wherever the program runs: its
  // limits, its wall-clock timeout (process.timeout_s), its stdin and fd 3.
  // `stem` names the program's job and files ("build", "time", "host") where
  // they need names. A scheduler that ended the program itself says so in
  // SubprocessResult::lost, and names the job in SubprocessResult::job. An
  // error only when the program (or its submission) cannot be started.
  virtual Result<SubprocessResult> Run(const SubprocessOptions& process, const std::string& stem) const = 0;
  // True when programs run on this machine: its host is the one measured and
  // its $PATH is theirs. False for a cluster's compute nodes.
  virtual bool RunsHere() const = 0;
  // Where an evaluator makes its work dir: a folder the programs can see.
  virtual std::filesystem::path ScratchRoot() const = 0;
};

// The executor that runs programs here; one shared by the whole process.
std::shared_ptr<const Executor> LocalExecutor();

// An evaluator's work dir: `requested` (made if missing, kept), or a fresh
// folder "<prefix>-XXXXXX" (owned: the evaluator removes it) under the
// executor's ScratchRoot().
struct WorkDir {
  std::filesystem::path path;
  bool owned = false;
};
Result<WorkDir> PrepareWorkDir(const std::filesystem::path& requested, const Executor& executor,
                               const std::string& prefix);

}  // namespace kestrel
