#include "evaluators/runner_job.h"

#include <signal.h>

#include <algorithm>
#include <fstream>

#include "evaluators/sandbox.h"
#include "evaluators/subprocess.h"
#include "evaluators/verdict.h"

namespace kestrel {

JobRun RunRunnerJob(const RunnerProcess& process, const Job& job, const std::filesystem::path& dir,
                    const std::string& phase) {
  JobRun run;
  Job sent = job;
  sent.nonce = MakeNonce();
  const auto job_file = dir / (job.mode + ".json");
  {
    std::ofstream out(job_file, std::ios::binary | std::ios::trunc);
    out << JobToJson(sent);
    if (!out.flush()) {
      run.failure = Verdict(Outcome::kRejected, "evaluator error: cannot write " + job_file.string(), "");
      return run;
    }
  }
  std::uint64_t output_bytes = 0;
  if (job.mode == "outputs") {
    const auto segments = OutputSegments(job);
    if (!segments.empty()) output_bytes = segments.back().offset + segments.back().bytes;
  }
  SubprocessOptions options;
  options.argv = process.argv;
  options.argv.push_back(job_file.string());
  if (!process.env.empty()) options.env = EnvironmentWith(process.env);
  options.cwd = dir;
  options.timeout_s = process.timeout_s;
  options.cpu_limit_s = process.cpu_limit_s;
  options.memory_limit_bytes = process.memory_limit_bytes;
  options.file_size_limit_bytes = std::max(process.file_size_limit_bytes, 2 * output_bytes);
  options.result_pipe = true;

  const bool slurm = process.slurm != nullptr && process.slurm->enabled;
  auto ran = RunWith(process.slurm, process.slurm_limit_s, options, job.mode);
  if (!ran) {
    const std::string how = slurm ? "cannot submit " + process.name + " to Slurm: " : "cannot start " + process.name + ": ";
    run.failure = Verdict(Outcome::kRejected, "evaluator error: " + how + ran.error().message(), "");
    return run;
  }
  run.log = ran->log;
  if (!ran->job.empty()) run.log += (run.log.empty() || run.log.back() == '\n' ? "" : "\n") + ("ran as " + ran->job + "\n");
  const std::string log = run.log.empty() ? "" : "runner output (" + phase + "):\n" + run.log;
  const std::string while_phase = " while " + phase;
  // Under bwrap, the runner's death by signal N reads as bwrap's exit 128 + N.
  const int signal = ran->signal != 0 ? ran->signal : process.bwrap ? SignalFromBwrapExit(ran->exit_code) : 0;
  std::optional<JobResult> parsed;
  std::string parse_error;
  if (!ran->result.empty() && !ran->result_truncated) {
    if (auto result = ParseJobResult(ran->result); result) {
      parsed = std::move(*result);
    } else {
      parse_error = result.error().message();
    }
  }
  if (ran->timed_out) {
    run.failure = Verdict(Outcome::kTimedOut, ran->Describe(process.timeout_s) + while_phase, log);
  } else if (!ran->lost.empty()) {
    run.failure = Verdict(Outcome::kCrashed, ran->lost + while_phase, log);
  } else if (signal == SIGXCPU) {
    run.failure = Verdict(Outcome::kTimedOut, "exceeded its CPU-time limit" + while_phase, log);
  } else if (signal == SIGSYS) {
    run.failure = Verdict(Outcome::kRejected, SandboxViolation(ran->log) + while_phase, log);
  } else if (signal != 0) {
    run.failure = Verdict(Outcome::kCrashed, "killed by " + SignalName(signal) + while_phase, log);
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

Result<HostInfo> ProbeHost(const RunnerProcess& process, const std::filesystem::path& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  SubprocessOptions options;
  options.argv = process.argv;
  options.argv.push_back("--host");
  options.cwd = dir;
  options.timeout_s = process.timeout_s;
  options.result_pipe = true;
  auto ran = RunWith(process.slurm, process.slurm_limit_s, options, "host");
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
