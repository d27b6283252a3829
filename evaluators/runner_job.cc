#include "evaluators/runner_job.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <fstream>

#include "evaluators/subprocess.h"
#include "evaluators/verdict.h"

namespace kestrel {
namespace {

constexpr double kSupervisorSlackSeconds = 10;

// The job file of a Slurm job (the nodes cannot read our pipes): created
// afresh, owner-only, never through a link or FIFO left at its path.
Status WriteJobFile(const std::filesystem::path& path, const std::string& text) {
  ::unlink(path.c_str());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Fail(Error::Io("cannot create " + path.string() + ": " + std::strerror(errno)));
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t put = ::write(fd, text.data() + written, text.size() - written);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) break;
    written += static_cast<std::size_t>(put);
  }
  const bool ok = ::close(fd) == 0 && written == text.size();
  if (!ok) return Fail(Error::Io("cannot write " + path.string()));
  return {};
}

}  // namespace

JobRun RunRunnerJob(const RunnerProcess& process, const Job& job, const std::filesystem::path& dir,
                    const std::string& phase) {
  JobRun run;
  Job sent = job;
  sent.nonce = MakeNonce();
  sent.timeout_s = process.timeout_s;
  const bool slurm = process.slurm != nullptr && process.slurm->enabled;
  SubprocessOptions options;
  options.argv = process.argv;
  if (slurm) {
    const auto job_file = dir / (job.mode + ".json");
    if (auto written = WriteJobFile(job_file, JobToJson(sent)); !written) {
      run.failure = Verdict(Outcome::kRejected, "evaluator error: " + written.error().message(), "");
      return run;
    }
    options.argv.push_back(job_file.string());
  } else {
    // The job travels on the runner's stdin: no file a kernel could read.
    options.argv.push_back("-");
    options.stdin_data = JobToJson(sent);
  }
  std::uint64_t output_bytes = 0;
  if (job.mode == "outputs") {
    const auto segments = OutputSegments(job);
    if (!segments.empty()) output_bytes = segments.back().offset + segments.back().bytes;
  }
  options.env = process.env;
  options.cwd = dir;
  // The supervisor keeps the job's wall clock and reports a timeout itself;
  // this one only catches a supervisor that stopped answering.
  options.timeout_s = process.timeout_s + kSupervisorSlackSeconds;
  options.cpu_limit_s = process.cpu_limit_s;
  options.memory_limit_bytes = process.memory_limit_bytes;
  options.file_size_limit_bytes = std::max(process.file_size_limit_bytes, 2 * output_bytes);
  options.result_pipe = true;

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
  if (ran->timed_out) {
    run.failure = Verdict(Outcome::kTimedOut, ran->Describe(process.timeout_s) + while_phase, log);
  } else if (!ran->lost.empty()) {
    run.failure = Verdict(Outcome::kCrashed, ran->lost + while_phase, log);
  } else if (signal == SIGXCPU) {
    run.failure = Verdict(Outcome::kTimedOut, "exceeded its CPU-time limit" + while_phase, log);
  } else if (signal != 0) {
    run.failure = Verdict(Outcome::kCrashed, "killed by " + SignalName(signal) + while_phase, log);
  } else if (parsed && parsed->nonce == sent.nonce && !parsed->verdict.empty()) {
    // The supervisor's verdict on a kernel's worker.
    const auto outcome = ParseOutcome(parsed->verdict);
    run.failure = outcome ? Verdict(*outcome, parsed->verdict_reason + while_phase, log)
                          : Verdict(Outcome::kRejected, "runner protocol violation: unknown verdict", log);
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
