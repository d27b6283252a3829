#pragma once
// RunnerPool: supervisors kept for an evaluator's whole run (kestrel-runner
// --serve, runner/serve.h), one per job running at once, each reused for job
// after job. A kept supervisor keeps the shared regions and the reference's
// worker between jobs, so that neither is made, nor its memory touched for
// the first time, once per candidate (docs/BENCHMARKS.md: on this VM a
// process's first access to a page costs about 6 us). Each candidate still
// gets a fresh worker in a fresh sandbox.
//
// A supervisor that did not answer a job (it crashed, was killed at the
// job's deadline, or exceeded a limit) is gone: the job's result says how, as
// for a supervisor of its own (runner_job.h), and the next job starts a
// fresh one. So does one that retires (its CPU-time limit a quarter used).
//
// Thread-safety: Run may be called from several threads at once.

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"
#include "evaluators/subprocess.h"

namespace kestrel {

class RunnerPool {
 public:
  // Each supervisor's own log (what it prints outside any job) is a file in `log_dir`.
  explicit RunnerPool(std::filesystem::path log_dir) : log_dir_(std::move(log_dir)) {}
  ~RunnerPool();
  RunnerPool(const RunnerPool&) = delete;
  RunnerPool& operator=(const RunnerPool&) = delete;

  // Runs one job as RunSubprocess runs `kestrel-runner -`: `options.argv`
  // is the supervisor's command line (its "--serve" is added here), its env
  // and rlimits start the supervisor, `stdin_data` is the job, `cwd` its
  // folder (the log is that folder's runner.log), `file_size_limit_bytes`
  // this job's and `timeout_s` the wall-clock limit. The result's `result`
  // is the job's result text. An error only when no supervisor can start.
  Result<SubprocessResult> Run(const SubprocessOptions& options);

  // Supervisors started so far (tests, logs).
  int started() const;

 private:
  struct Kept {
    std::string key;  // the command line, environment and limits it was started with
    std::unique_ptr<ServedProcess> process;
  };
  std::filesystem::path log_dir_;
  mutable std::mutex mutex_;
  std::vector<Kept> idle_;
  int started_ = 0;
};

}  // namespace kestrel
