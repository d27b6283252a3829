#include "evaluators/slurm_job.h"

#include <signal.h>
#include <stdlib.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>
#include <fstream>
#include <sstream>

#include "evaluators/subprocess.h"
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

}  // namespace

Result<double> CheckSlurmOptions(const SlurmOptions& options) {
  auto limit = ParseSlurmTime(options.time_limit);
  if (!limit) return Fail(limit.error());
  if (options.shared_dir.empty()) {
    return Fail(Error::InvalidArgument("executor.shared_dir: expected a folder the compute nodes share with this host"));
  }
  std::error_code error;
  std::filesystem::create_directories(options.shared_dir, error);
  if (error) {
    return Fail(Error::InvalidArgument("executor.shared_dir: cannot create " + options.shared_dir.string() + ": " +
                                       error.message()));
  }
  if (auto sbatch = FindProgram("sbatch"); !sbatch) {
    return Fail(Error::InvalidArgument("executor (slurm): " + sbatch.error().message() +
                                       "; install slurm-client, or use the local executor"));
  }
  return *limit;
}

Result<SubprocessResult> RunWith(const SlurmOptions* slurm, double slurm_limit_s, const SubprocessOptions& process,
                                 const std::string& stem) {
  if (slurm != nullptr && slurm->enabled) return RunAsSlurmJob(*slurm, process, stem, slurm_limit_s);
  return RunSubprocess(process);
}

Result<WorkDir> PrepareWorkDir(const std::filesystem::path& requested, const SlurmOptions& slurm,
                               const std::string& prefix) {
  WorkDir dir;
  if (slurm.enabled) {
    auto limit = CheckSlurmOptions(slurm);
    if (!limit) return Fail(limit.error());
    dir.slurm_limit_s = *limit;
  }
  if (!requested.empty()) {
    dir.path = std::filesystem::absolute(requested);
    std::error_code error;
    std::filesystem::create_directories(dir.path, error);
    if (error) return Fail(Error::Io("cannot create " + dir.path.string() + ": " + error.message()));
    return dir;
  }
  const auto parent = slurm.enabled ? std::filesystem::absolute(slurm.shared_dir)
                                    : std::filesystem::temp_directory_path();
  std::string pattern = (parent / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) return Fail(Error::Io("cannot create a directory like " + pattern));
  dir.path = pattern;
  dir.owned = true;
  return dir;
}

Result<double> ParseSlurmTime(const std::string& text) {
  const auto bad = [&] {
    return Fail(Error::InvalidArgument("executor.time_limit: expected a Slurm time such as \"30\" (minutes), "
                                       "\"10:00\", \"1:00:00\" or \"1-12\", got \"" + text + "\""));
  };
  if (text.empty() || text.find_first_not_of("0123456789:-") != std::string::npos) return bad();
  double days = 0;
  std::string rest = text;
  if (const auto dash = text.find('-'); dash != std::string::npos) {
    if (dash == 0 || text.find('-', dash + 1) != std::string::npos) return bad();
    days = std::stod(text.substr(0, dash));
    rest = text.substr(dash + 1);
  }
  if (rest.empty() || rest.back() == ':' || rest.find('-') != std::string::npos) return bad();
  std::vector<double> parts;
  std::istringstream fields(rest);
  for (std::string part; std::getline(fields, part, ':');) {
    if (part.empty()) return bad();
    parts.push_back(std::stod(part));
  }
  if (parts.empty() || parts.size() > 3) return bad();
  double seconds = 0;
  if (days > 0) {  // D-H, D-H:M, D-H:M:S
    const double scale[] = {3600, 60, 1};
    for (std::size_t i = 0; i < parts.size(); ++i) seconds += parts[i] * scale[i];
    return days * 86400 + seconds;
  }
  if (parts.size() == 1) return parts[0] * 60;             // M
  if (parts.size() == 2) return parts[0] * 60 + parts[1];  // M:S
  return parts[0] * 3600 + parts[1] * 60 + parts[2];       // H:M:S
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

namespace {

// sbatch --wrap=<script line>, waited for; see RunSlurmJob.
bool Pending(const std::string& state) {
  return state == "PENDING" || state == "CONFIGURING" || state == "RUNNING" || state == "COMPLETING" ||
         state == "STAGE_OUT" || state == "SUSPENDED" || state == "REQUEUED" || state == "RESIZING" ||
         state == "SIGNALING" || state == "REQUEUE_HOLD" || state == "REQUEUE_FED";
}

// sbatch --wrap=<script line>, then scontrol polled until the job's state is
// final (sbatch --wait sleeps 2, 8, then 32 s between polls: far too coarse
// for a job of a few seconds); see RunSlurmJob.
Result<SlurmJobResult> RunSlurmScript(const SlurmOptions& options, const std::string& script,
                                      const std::filesystem::path& dir, double wall_timeout_s,
                                      const std::string& stem) {
  const auto start = std::chrono::steady_clock::now();
  const auto output_file = dir / (stem + ".out");
  SubprocessOptions submit;
  submit.argv = {"sbatch", "--parsable", "--job-name=kestrel-" + stem, "--chdir=" + dir.string(),
                 "--output=" + output_file.string(), "--time=" + options.time_limit};
  if (!options.partition.empty()) submit.argv.push_back("--partition=" + options.partition);
  if (!options.gres.empty()) submit.argv.push_back("--gres=" + options.gres);
  submit.argv.insert(submit.argv.end(), options.sbatch_args.begin(), options.sbatch_args.end());
  submit.argv.push_back("--wrap=" + script);
  submit.cwd = dir;
  submit.timeout_s = 60;
  auto submitted = RunSubprocess(submit);
  if (!submitted) return Fail(submitted.error());
  SlurmJobResult result;
  result.job_id = submitted->Succeeded() ? JobId(submitted->log) : "";
  result.log = submitted->log;
  if (result.job_id.empty()) return result;

  SubprocessOptions show;
  show.argv = {"scontrol", "show", "job", result.job_id};
  show.timeout_s = 30;
  auto pause = std::chrono::milliseconds(100);
  for (;;) {
    auto shown = RunSubprocess(show);
    if (shown && shown->Succeeded()) {
      result.state = Field(shown->log, "JobState");
      result.exit_code = Field(shown->log, "ExitCode");
      result.node = Field(shown->log, "NodeList");
      result.run_time = Field(shown->log, "RunTime");
      if (!Pending(result.state)) break;
      if (result.state == "COMPLETING" && Field(shown->log, "Reason") == "TimeLimit") {
        result.state = "TIMEOUT";  // still cleaning up after its time limit
        break;
      }
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > wall_timeout_s) {
      result.waited_too_long = true;
      SubprocessOptions cancel;
      cancel.argv = {"scancel", result.job_id};
      cancel.timeout_s = 30;
      (void)RunSubprocess(cancel);
      break;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(1000));
  }
  result.output = ReadAll(output_file);
  if (!result.output.empty()) result.log += "job output:\n" + result.output;
  return result;
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

std::string Shorten(std::string text, std::size_t limit) {
  if (text.size() > limit) text = text.substr(0, limit / 2) + "\n[...]\n" + text.substr(text.size() - limit / 2);
  return text;
}

constexpr int kTimeoutExit = 124;  // coreutils timeout: the command timed out

}  // namespace

Result<SlurmJobResult> RunSlurmJob(const SlurmOptions& options, const std::vector<std::string>& argv,
                                   const std::filesystem::path& dir, double wall_timeout_s, const std::string& stem) {
  return RunSlurmScript(options, "exec " + ShellQuote(argv), dir, wall_timeout_s, stem);
}

Result<SubprocessResult> RunAsSlurmJob(const SlurmOptions& options, const SubprocessOptions& process,
                                       const std::string& stem, double slurm_limit_s) {
  const std::filesystem::path dir = process.cwd.empty() ? std::filesystem::current_path() : process.cwd;
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
  const auto result_file = dir / (stem + ".result");
  std::error_code ignored;
  std::filesystem::remove(result_file, ignored);
  std::string script = "exec " + ShellQuote(argv);
  if (process.result_pipe) script += " 3>" + ShellQuote({result_file.string()});

  const auto start = std::chrono::steady_clock::now();
  auto job = RunSlurmScript(options, script, dir, std::max(0.0, process.timeout_s) + slurm_limit_s, stem);
  if (!job) return Fail(job.error());
  SubprocessResult ran;
  ran.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ran.log = Shorten(job->output, process.log_limit_bytes);
  if (job->job_id.empty()) {
    ran.lost = "sbatch could not submit the job: " + Shorten(job->log, 2048);
    return ran;
  }
  ran.job = "Slurm job " + job->job_id + (job->node.empty() ? "" : " on " + job->node);
  if (process.result_pipe) {
    std::ifstream in(result_file, std::ios::binary);
    std::string text(process.result_limit_bytes + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    ran.result_truncated = text.size() > process.result_limit_bytes;
    if (ran.result_truncated) text.resize(process.result_limit_bytes);
    ran.result = std::move(text);
  }
  const auto [status, signal] = ExitStatus(job->exit_code);
  ran.exit_code = status;
  ran.signal = signal;
  if (job->waited_too_long) {
    ran.lost = ran.job + " did not end within " + Number(process.timeout_s + slurm_limit_s) +
               " s (queue and run); it was cancelled";
  } else if (job->state == "TIMEOUT") {
    ran.timed_out = true;
    ran.lost = ran.job + " hit its Slurm time limit (" + options.time_limit + ")";
  } else if (job->state == "COMPLETED" || job->state == "FAILED") {
    const auto ran_for = ParseSlurmTime(job->run_time);  // scontrol's RunTime: "00:01:05", "1-00:01:05"
    if (process.timeout_s > 0 &&
        (status == kTimeoutExit || (signal == SIGKILL && ran_for && *ran_for >= std::floor(process.timeout_s)))) {
      ran.timed_out = true;
      ran.signal = SIGKILL;
      ran.exit_code = -1;
    }
  } else if (job->state == "CANCELLED") {
    ran.lost = ran.job + " was cancelled";
  } else if (job->state == "OUT_OF_MEMORY") {
    ran.lost = ran.job + " ran out of memory (Slurm's limit for the job)";
  } else {
    ran.lost = ran.job + " ended " + (job->state.empty() ? "in an unknown state" : job->state);
  }
  return ran;
}

}  // namespace kestrel
