#include "evaluators/runner_job.h"

#include <signal.h>

#include <algorithm>
#include <fstream>

#include "evaluators/runner_pool.h"
#include "evaluators/subprocess.h"
#include "evaluators/verdict.h"

namespace kestrel {
namespace {

constexpr double kSupervisorSlackSeconds = 10;

}  // namespace

JobRun RunRunnerJob(const Executor& executor, const RunnerProcess& process, const Job& job,
                    const std::filesystem::path& dir, const std::string& phase, RunnerPool* pool) {
  JobRun run;
  Job sent = job;
  sent.nonce = MakeNonce();
  sent.timeout_s = process.timeout_s;
  SubprocessOptions options;
  options.argv = process.argv;
  // The job travels on the runner's stdin: no file a kernel could read.
  if (pool == nullptr) options.argv.push_back("-");
  options.stdin_data = JobToJson(sent);
  std::uint64_t output_bytes = 0;
  if (job.mode == "outputs" || job.mode == "evaluate") {
    const auto segments = OutputSegments(job);
    if (!segments.empty()) output_bytes = segments.back().offset + segments.back().bytes;
  }
  if (job.prepare_inputs) output_bytes = std::max(output_bytes, PrepareLayout(job).bytes);
  options.env = process.env;
  options.cwd = dir;
  // The supervisor keeps the job's wall clock and reports a timeout itself;
  // this one only catches a supervisor that stopped answering.
  options.timeout_s = process.timeout_s + kSupervisorSlackSeconds;
  options.cpu_limit_s = process.cpu_limit_s;
  options.memory_limit_bytes = process.memory_limit_bytes;
  options.file_size_limit_bytes = std::max(process.file_size_limit_bytes, 2 * output_bytes);
  options.result_pipe = true;

  auto ran = pool != nullptr ? pool->Run(options) : executor.Run(options, job.mode);
  if (!ran) {
    run.failure = Verdict(Outcome::kRejected, "evaluator error: cannot start " + process.name + ": " + ran.error().message(), "");
    return run;
  }
  if (process.bubblewrapped) ran->ReadAsBubblewrapped();
  run.log = ran->log;
  if (!ran->job.empty()) run.log += (run.log.empty() || run.log.back() == '\n' ? "" : "\n") + ("ran as " + ran->job + "\n");
  const std::string log = run.log.empty() ? "" : "runner output (" + phase + "):\n" + run.log;
  const std::string while_phase = " while " + phase;
  const int signal = ran->signal;
  std::optional<JobResult> parsed;
  std::string parse_error;
  if (!ran->result.empty() && !ran->result_truncated) {
    if (auto result = ParseJobResult(ran->result); result) {
      parsed = std::move(*result);
    } else {
      parse_error = result.error().message();
    }
  }
  if (ran->withdrawn) {
    run.failure = Verdict(Outcome::kRejected, ran->lost + while_phase, log);
    run.failure->withdrawn = true;
  } else if (ran->timed_out) {
    run.failure = Verdict(Outcome::kTimedOut, ran->Describe(process.timeout_s) + while_phase, log);
  } else if (!ran->lost.empty()) {
    run.failure = Verdict(Outcome::kCrashed, ran->lost + while_phase, log);
  } else if (signal == SIGXCPU) {
    run.failure = Verdict(Outcome::kTimedOut, "exceeded its CPU-time limit" + while_phase, log);
  } else if (signal != 0) {
    run.failure = Verdict(Outcome::kCrashed, "killed by " + SignalName(signal) + while_phase, log);
  } else if (parsed && parsed->nonce == sent.nonce && !parsed->verdict.empty()) {
    // The supervisor's verdict on a kernel's worker, in the step it names
    // (an evaluate job's), else in this job's phase. What it did before
    // the verdict stays in the result (an evaluate job's checks).
    const auto outcome = ParseOutcome(parsed->verdict);
    const std::string in_phase = parsed->verdict_phase.empty() ? while_phase : " while " + parsed->verdict_phase;
    run.failure = outcome ? Verdict(*outcome, parsed->verdict_reason + in_phase, log)
                          : Verdict(Outcome::kRejected, "runner protocol violation: unknown verdict", log);
    run.result = std::move(*parsed);
  } else if (parsed && parsed->nonce == sent.nonce && !parsed->error.empty()) {
    // A runner that could not do the job says why, whatever its exit status
    // (kestrel-cuda-runner exits 3 without a device).
    run.failure = Verdict(Outcome::kCrashed, "runner: " + parsed->error, log);
  } else if (ran->exit_code != 0) {
    run.failure = Verdict(Outcome::kCrashed, ran->Describe(0) + while_phase, log);
  } else if (ran->result.empty()) {
    run.failure = Verdict(Outcome::kCrashed, "ended the runner before it reported a result" + while_phase, log);
  } else if (ran->result_truncated) {
    run.failure = Verdict(Outcome::kRejected, "runner protocol violation: oversized result" + while_phase, log);
  } else if (!parsed) {
    run.failure = Verdict(Outcome::kRejected, "runner protocol violation: " + parse_error, log);
  } else if (parsed->nonce != sent.nonce) {
    run.failure = Verdict(Outcome::kRejected, "runner protocol violation: bad nonce" + while_phase, log);
  } else {
    run.result = std::move(*parsed);
  }
  return run;
}

Result<HostInfo> ProbeHost(const Executor& executor, const RunnerProcess& process, const std::filesystem::path& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  SubprocessOptions options;
  options.argv = process.argv;
  options.argv.push_back("--host");
  options.cwd = dir;
  options.timeout_s = process.timeout_s;
  options.result_pipe = true;
  auto ran = executor.Run(options, "host");
  if (!ran) return Fail(ran.error());
  if (!ran->Succeeded()) {
    return Fail(Error::Io(process.name + " --host " + ran->Describe(process.timeout_s) +
                          (ran->log.empty() ? "" : ":\n" + ran->log)));
  }
  auto host = ParseHost(ran->result);
  if (!host) return Fail(host.error());
  return host;
}

}  // namespace kestrel
