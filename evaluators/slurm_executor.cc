#include "evaluators/slurm_executor.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "core/stop.h"
#include "core/text_lines.h"
#include "evaluators/verdict.h"

namespace kestrel {
namespace {

// The value of `key=` in scontrol's "Key=Value Key=Value" output.
std::string Field(const std::string& text, const std::string& key) {
  for (std::size_t at = text.find(key + "="); at != std::string::npos; at = text.find(key + "=", at + 1)) {
    if (at > 0 && !std::isspace(static_cast<unsigned char>(text[at - 1]))) continue;
    const std::size_t start = at + key.size() + 1;
    std::size_t end = start;
    while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
    return text.substr(start, end - start);
  }
  return "";
}

// sbatch --parsable prints "<id>" or "<id>;<cluster>" on a line of its own.
std::string JobId(const std::string& output) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    const std::string id = line.substr(0, line.find(';'));
    if (!id.empty() && id.find_first_not_of("0123456789") == std::string::npos) return id;
  }
  return "";
}

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  std::string out = text.str();
  if (out.size() > 64 * 1024) out = out.substr(0, 32 * 1024) + "\n[...]\n" + out.substr(out.size() - 32 * 1024);
  return out;
}

// A job's stdin file (the nodes cannot read our pipes): created afresh,
// owner-only, never through a link or FIFO left at its path.
Status WriteStdinFile(const std::filesystem::path& path, const std::string& text) {
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

class SlurmCommands final : public SlurmClient {
 public:
  Result<SlurmSubmission> Submit(const std::vector<std::string>& options, const std::string& script,
                                 const std::filesystem::path& dir) const override {
    SubprocessOptions submit;
    submit.argv = {"sbatch", "--parsable"};
    submit.argv.insert(submit.argv.end(), options.begin(), options.end());
    submit.argv.push_back("--wrap=" + script);
    submit.cwd = dir;
    submit.timeout_s = 60;
    auto submitted = RunSubprocess(submit);
    if (!submitted) return Fail(submitted.error());
    return SlurmSubmission{submitted->Succeeded() ? JobId(submitted->log) : "", submitted->log};
  }

  std::optional<SlurmJobState> Show(const std::string& job_id) const override {
    SubprocessOptions show;
    show.argv = {"scontrol", "show", "job", job_id};
    show.timeout_s = 30;
    auto shown = RunSubprocess(show);
    if (!shown || !shown->Succeeded()) return std::nullopt;
    return SlurmJobState{Field(shown->log, "JobState"), Field(shown->log, "ExitCode"), Field(shown->log, "NodeList"),
                         Field(shown->log, "RunTime"), Field(shown->log, "Reason")};
  }

  void Cancel(const std::string& job_id) const override {
    SubprocessOptions cancel;
    cancel.argv = {"scancel", job_id};
    cancel.timeout_s = 30;
    (void)RunSubprocess(cancel);
  }
};

bool Pending(const std::string& state) {
  return state == "PENDING" || state == "CONFIGURING" || state == "RUNNING" || state == "COMPLETING" ||
         state == "STAGE_OUT" || state == "SUSPENDED" || state == "REQUEUED" || state == "RESIZING" ||
         state == "SIGNALING" || state == "REQUEUE_HOLD" || state == "REQUEUE_FED";
}

// "12:0" (status:signal) from scontrol's ExitCode.
std::pair<int, int> ExitStatus(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return {-1, 0};
  try {
    return {std::stoi(text.substr(0, colon)), std::stoi(text.substr(colon + 1))};
  } catch (const std::exception&) {
    return {-1, 0};
  }
}

constexpr int kTimeoutExit = 124;  // coreutils timeout: the command timed out

// A submitted job, waited for.
struct EndedJob {
  SlurmSubmission submission;
  SlurmJobState state;           // its last known state
  bool waited_too_long = false;  // our own wall-clock limit passed; the job was scancelled
  bool queued_too_long = false;  // it waited in the queue past queue_limit; the job was scancelled
  bool withdrawn = false;        // a stop was requested while it was queued; the job was scancelled
  std::string output;            // the job's output file (stdout and stderr)
};

// Waiting for a node, not running: no limit of the program's counts.
bool Queued(const std::string& state) {
  return state == "PENDING" || state == "CONFIGURING" || state == "REQUEUED" || state == "REQUEUE_HOLD" ||
         state == "REQUEUE_FED";
}

// Ends that are the cluster's, not the program's: worth submitting again.
bool ClusterLost(const std::string& state) {
  return state == "NODE_FAIL" || state == "BOOT_FAIL" || state == "PREEMPTED" || state == "CANCELLED";
}

constexpr int kSubmissions = 3;  // a job the cluster lost is submitted again, twice at most

class Slurm final : public Executor {
 public:
  Slurm(SlurmOptions options, double limit_s, double queue_limit_s, std::shared_ptr<const SlurmClient> client)
      : options_(std::move(options)), limit_s_(limit_s), queue_limit_s_(queue_limit_s), client_(std::move(client)) {}

  Result<SubprocessResult> Run(const SubprocessOptions& process, const std::string& stem) const override;
  bool RunsHere() const override { return false; }
  std::filesystem::path ScratchRoot() const override { return options_.shared_dir; }

 private:
  // The job script: the program wrapped so that it keeps RunSubprocess's limits.
  Result<std::string> Script(const SubprocessOptions& process, const std::filesystem::path& dir,
                             const std::string& stem) const;
  // sbatch --wrap=<script>, then scontrol polled until the job's state is
  // final (sbatch --wait sleeps 2, 8, then 32 s between polls: far too
  // coarse for a job of a few seconds).
  Result<EndedJob> Wait(const std::string& script, const std::filesystem::path& dir, double wall_timeout_s,
                        const std::string& stem) const;
  // One submission, waited for and read back; `again`: the cluster lost it
  // (worth submitting again).
  Result<SubprocessResult> RunOnce(const SubprocessOptions& process, const std::string& stem, bool& again) const;

  SlurmOptions options_;
  double limit_s_;        // options_.time_limit in seconds
  double queue_limit_s_;  // options_.queue_limit in seconds
  std::shared_ptr<const SlurmClient> client_;
};

Result<std::string> Slurm::Script(const SubprocessOptions& process, const std::filesystem::path& dir,
                                  const std::string& stem) const {
  std::vector<std::string> argv{"prlimit", "--core=0"};
  if (process.cpu_limit_s > 0) {
    const auto seconds = static_cast<long long>(std::ceil(process.cpu_limit_s));  // as RunSubprocess: SIGXCPU, then SIGKILL
    argv.push_back("--cpu=" + std::to_string(seconds) + ":" + std::to_string(seconds + 1));
  }
  if (process.memory_limit_bytes > 0) argv.push_back("--as=" + std::to_string(process.memory_limit_bytes));
  if (process.file_size_limit_bytes > 0) argv.push_back("--fsize=" + std::to_string(process.file_size_limit_bytes));
  argv.push_back("--");
  if (process.timeout_s > 0) {
    // TERM first, so that `timeout` survives to exit 124; KILL 2 s later.
    argv.insert(argv.end(), {"timeout", "--kill-after=2", Number(process.timeout_s)});
  }
  std::vector<std::string> changed;
  for (const std::string& entry : process.env) {
    const auto equals = entry.find('=');
    const char* now = std::getenv(entry.substr(0, equals).c_str());
    if (equals == std::string::npos || now == nullptr || entry.substr(equals + 1) != now) changed.push_back(entry);
  }
  if (!changed.empty()) {
    argv.push_back("env");
    argv.insert(argv.end(), changed.begin(), changed.end());
  }
  argv.insert(argv.end(), process.argv.begin(), process.argv.end());
  std::string script = "exec " + ShellQuote(argv);
  if (!process.stdin_data.empty()) {
    const auto stdin_file = dir / (stem + ".in");
    if (auto written = WriteStdinFile(stdin_file, process.stdin_data); !written) return Fail(written.error());
    script += " <" + ShellQuote({stdin_file.string()});
  }
  if (process.result_pipe) script += " 3>" + ShellQuote({(dir / (stem + ".result")).string()});
  return script;
}

Result<EndedJob> Slurm::Wait(const std::string& script, const std::filesystem::path& dir, double wall_timeout_s,
                             const std::string& stem) const {
  const auto start = std::chrono::steady_clock::now();
  const auto output_file = dir / (stem + ".out");
  std::vector<std::string> sbatch = {"--job-name=kestrel-" + stem, "--chdir=" + dir.string(),
                                     "--output=" + output_file.string(), "--time=" + options_.time_limit};
  if (!options_.partition.empty()) sbatch.push_back("--partition=" + options_.partition);
  if (!options_.gres.empty()) sbatch.push_back("--gres=" + options_.gres);
  sbatch.insert(sbatch.end(), options_.sbatch_args.begin(), options_.sbatch_args.end());
  auto submitted = client_->Submit(sbatch, script, dir);
  if (!submitted) return Fail(submitted.error());
  EndedJob job;
  job.submission = std::move(*submitted);
  if (job.submission.job_id.empty()) return job;

  // The program's limit counts from when the job left the queue.
  std::optional<std::chrono::steady_clock::time_point> started;
  auto pause = std::chrono::milliseconds(100);
  for (;;) {
    bool queued = !started;
    if (auto shown = client_->Show(job.submission.job_id)) {
      job.state = std::move(*shown);
      if (!Pending(job.state.state)) break;
      if (job.state.state == "COMPLETING" && job.state.reason == "TimeLimit") {
        job.state.state = "TIMEOUT";  // still cleaning up after its time limit
        break;
      }
      queued = Queued(job.state.state);
      if (!queued && !started) started = std::chrono::steady_clock::now();
    }
    const auto now = std::chrono::steady_clock::now();
    if (queued && StopRequested()) {
      // Ctrl-C: what has not started is not waited for (an hour in a busy
      // queue), nor left queued to run for nobody.
      job.withdrawn = true;
      client_->Cancel(job.submission.job_id);
      break;
    }
    if (queued && std::chrono::duration<double>(now - start).count() > queue_limit_s_) {
      job.queued_too_long = true;
      client_->Cancel(job.submission.job_id);
      break;
    }
    if (started && std::chrono::duration<double>(now - *started).count() > wall_timeout_s) {
      job.waited_too_long = true;
      client_->Cancel(job.submission.job_id);
      break;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(1000));
  }
  job.output = ReadAll(output_file);
  return job;
}

Result<SubprocessResult> Slurm::Run(const SubprocessOptions& process, const std::string& stem) const {
  std::string earlier;  // what became of the submissions the cluster lost
  for (int submission = 1;; ++submission) {
    if (StopRequested()) {
      SubprocessResult withdrawn;
      withdrawn.withdrawn = true;
      withdrawn.lost = "not submitted to Slurm: the run is stopping";
      withdrawn.log = earlier;
      return withdrawn;
    }
    bool again = false;
    auto ran = RunOnce(process, stem, again);
    if (!ran) return ran;
    if (!again || submission == kSubmissions) {
      if (!earlier.empty()) {
        ran->log = earlier + ran->log;
        if (!ran->lost.empty()) ran->lost += " (submitted " + std::to_string(submission) + " times)";
      }
      return ran;
    }
    earlier += "kestrel: " + ran->lost + "; submitted again\n";
    std::this_thread::sleep_for(std::chrono::duration<double>(options_.resubmit_pause_s * submission));
  }
}

Result<SubprocessResult> Slurm::RunOnce(const SubprocessOptions& process, const std::string& stem, bool& again) const {
  const std::filesystem::path dir = process.cwd.empty() ? std::filesystem::current_path() : process.cwd;
  const auto result_file = dir / (stem + ".result");
  std::error_code ignored;
  std::filesystem::remove(result_file, ignored);
  auto script = Script(process, dir, stem);
  if (!script) return Fail(script.error());

  const auto start = std::chrono::steady_clock::now();
  const double wait_s = std::max(0.0, process.timeout_s) + limit_s_;
  auto job = Wait(*script, dir, wait_s, stem);
  if (!job) return Fail(job.error());
  SubprocessResult ran;
  ran.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ran.log = HeadAndTail(job->output, process.log_limit_bytes);
  if (job->submission.job_id.empty()) {
    ran.lost = "sbatch could not submit the job: " + HeadAndTail(job->submission.log, 2048);
    again = true;  // "temporarily unable to accept job", a controller's timeout
    return ran;
  }
  ran.job = "Slurm job " + job->submission.job_id + (job->state.node.empty() ? "" : " on " + job->state.node);
  if (process.result_pipe) {
    std::ifstream in(result_file, std::ios::binary);
    std::string text(process.result_limit_bytes + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    ran.result_truncated = text.size() > process.result_limit_bytes;
    if (ran.result_truncated) text.resize(process.result_limit_bytes);
    ran.result = std::move(text);
  }
  const auto [status, signal] = ExitStatus(job->state.exit_code);
  ran.exit_code = status;
  ran.signal = signal;
  const std::string& state = job->state.state;
  if (job->withdrawn) {
    ran.withdrawn = true;
    ran.lost = ran.job + " was still queued when the run was stopped; it was cancelled";
  } else if (job->queued_too_long) {
    ran.lost = ran.job + " waited in the queue past executor.queue_limit (" + options_.queue_limit + ", reason " +
               (job->state.reason.empty() ? "unknown" : job->state.reason) + "); it was cancelled";
  } else if (job->waited_too_long) {
    ran.lost = ran.job + " did not end within " + Number(wait_s) + " s of starting; it was cancelled";
  } else if (state == "TIMEOUT") {
    ran.timed_out = true;
    ran.lost = ran.job + " hit its time limit (" + options_.time_limit + ")";
  } else if (state == "COMPLETED" || state == "FAILED") {
    const auto ran_for = ParseSlurmTime(job->state.run_time);  // scontrol's RunTime: "00:01:05", "1-00:01:05"
    if (process.timeout_s > 0 &&
        (status == kTimeoutExit || (signal == SIGKILL && ran_for && *ran_for >= std::floor(process.timeout_s)))) {
      ran.timed_out = true;
      ran.signal = SIGKILL;
      ran.exit_code = -1;
    }
  } else if (state == "CANCELLED") {
    ran.lost = ran.job + " was cancelled";
    again = true;  // by someone else: Kestrel's own cancellations are above
  } else if (state == "OUT_OF_MEMORY") {
    ran.lost = ran.job + " ran out of memory (Slurm's limit for the job)";
  } else {
    ran.lost = ran.job + " ended " + (state.empty() ? "in an unknown state" : state);
    again = ClusterLost(state);
  }
  return ran;
}

}  // namespace

Result<std::shared_ptr<const SlurmClient>> MakeSlurmCommands() {
  if (auto sbatch = FindProgram("sbatch"); !sbatch) {
    return Fail(Error::InvalidArgument("executor (slurm): " + sbatch.error().message() +
                                       "; install slurm-client, or use the local executor"));
  }
  return std::make_shared<const SlurmCommands>();
}

Result<std::shared_ptr<const Executor>> MakeSlurmExecutor(const SlurmOptions& options,
                                                          std::shared_ptr<const SlurmClient> client) {
  auto limit = ParseSlurmTime(options.time_limit);
  if (!limit) return Fail(limit.error());
  auto queue_limit = ParseSlurmTime(options.queue_limit, "executor.queue_limit");
  if (!queue_limit) return Fail(queue_limit.error());
  if (options.shared_dir.empty()) {
    return Fail(Error::InvalidArgument("executor.shared_dir: expected a folder the compute nodes share with this host"));
  }
  std::error_code error;
  std::filesystem::create_directories(options.shared_dir, error);
  if (error) {
    return Fail(Error::InvalidArgument("executor.shared_dir: cannot create " + options.shared_dir.string() + ": " +
                                       error.message()));
  }
  if (!client) {
    auto commands = MakeSlurmCommands();
    if (!commands) return Fail(commands.error());
    client = std::move(*commands);
  }
  SlurmOptions absolute = options;
  absolute.shared_dir = std::filesystem::absolute(options.shared_dir);
  return std::shared_ptr<const Executor>(std::make_shared<const Slurm>(std::move(absolute), *limit, *queue_limit, std::move(client)));
}

Result<double> ParseSlurmTime(const std::string& text, const std::string& field) {
  const auto bad = [&](const std::string& why) {
    return Fail(Error::InvalidArgument(field + ": expected a Slurm time such as \"30\" (minutes), "
                                       "\"10:00\", \"1:00:00\" or \"1-12\"" + why + ", got \"" + text + "\""));
  };
  if (text == "0" || text == "UNLIMITED" || text == "INFINITE") {
    // sbatch takes these for no limit; a search waits for every job, so
    // each needs one (a job that never ends would stop the search).
    return bad(" (a limit: a search waits for every job)");
  }
  if (text.empty() || text.find_first_not_of("0123456789:-") != std::string::npos) return bad("");
  // A field of at most 9 digits: "999...9" once threw out of std::stod and aborted the run.
  const auto number = [](const std::string& digits) -> std::optional<double> {
    if (digits.empty() || digits.size() > 9) return std::nullopt;
    return std::stod(digits);
  };
  bool has_days = false;
  double days = 0;
  std::string rest = text;
  if (const auto dash = text.find('-'); dash != std::string::npos) {
    if (dash == 0 || text.find('-', dash + 1) != std::string::npos) return bad("");
    const auto value = number(text.substr(0, dash));
    if (!value) return bad("");
    has_days = true;
    days = *value;
    rest = text.substr(dash + 1);
  }
  if (rest.empty() || rest.back() == ':') return bad("");
  std::vector<double> parts;
  std::istringstream fields(rest);
  for (std::string part; std::getline(fields, part, ':');) {
    const auto value = number(part);
    if (!value) return bad("");
    parts.push_back(*value);
  }
  if (parts.empty() || parts.size() > 3) return bad("");
  double seconds = 0;
  if (has_days) {  // D-H, D-H:M, D-H:M:S ("0-5" is five hours, not minutes)
    const double scale[] = {3600, 60, 1};
    for (std::size_t i = 0; i < parts.size(); ++i) seconds += parts[i] * scale[i];
    seconds += days * 86400;
  } else if (parts.size() == 1) {
    seconds = parts[0] * 60;  // M
  } else if (parts.size() == 2) {
    seconds = parts[0] * 60 + parts[1];  // M:S
  } else {
    seconds = parts[0] * 3600 + parts[1] * 60 + parts[2];  // H:M:S
  }
  if (!(seconds > 0)) return bad(" (longer than zero)");
  return seconds;
}

std::string ShellQuote(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& arg : argv) {
    if (!line.empty()) line += ' ';
    line += '\'';
    for (char c : arg) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

}  // namespace kestrel
