#include "evaluators/slurm_job.h"

#include <cctype>
#include <chrono>
#include <thread>
#include <fstream>
#include <sstream>

#include "evaluators/subprocess.h"

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

Result<SlurmJobResult> RunSlurmJob(const SlurmOptions& options, const std::vector<std::string>& argv,
                                   const std::filesystem::path& dir, double wall_timeout_s) {
  SubprocessOptions submit;
  submit.argv = {"sbatch", "--wait", "--parsable", "--job-name=kestrel-eval", "--chdir=" + dir.string(),
                 "--output=" + (dir / "slurm.out").string(), "--time=" + options.time_limit};
  if (!options.partition.empty()) submit.argv.push_back("--partition=" + options.partition);
  if (!options.gres.empty()) submit.argv.push_back("--gres=" + options.gres);
  submit.argv.insert(submit.argv.end(), options.sbatch_args.begin(), options.sbatch_args.end());
  submit.argv.push_back("--wrap=exec " + ShellQuote(argv));
  submit.cwd = dir;
  submit.timeout_s = wall_timeout_s;
  auto submitted = RunSubprocess(submit);
  if (!submitted) return Fail(submitted.error());
  SlurmJobResult result;
  result.job_id = JobId(submitted->log);
  result.log = submitted->log;
  if (result.job_id.empty()) return result;
  if (submitted->timed_out) {
    result.waited_too_long = true;
    SubprocessOptions cancel;
    cancel.argv = {"scancel", result.job_id};
    cancel.timeout_s = 30;
    (void)RunSubprocess(cancel);
  }
  SubprocessOptions show;
  show.argv = {"scontrol", "show", "job", result.job_id};
  show.timeout_s = 30;
  // sbatch --wait may return while the job is still COMPLETING (its steps
  // being cleaned up): ask again until the state is final, for up to 30 s.
  bool shown_once = false;
  for (int attempt = 0; attempt < 60; ++attempt) {
    auto shown = RunSubprocess(show);
    if (!shown || !shown->Succeeded()) break;
    shown_once = true;
    result.state = Field(shown->log, "JobState");
    result.exit_code = Field(shown->log, "ExitCode");
    if (result.state != "COMPLETING" && result.state != "RUNNING" && result.state != "PENDING" &&
        result.state != "CONFIGURING" && result.state != "STAGE_OUT" && result.state != "SUSPENDED") {
      break;
    }
    if (Field(shown->log, "Reason") == "TimeLimit") {
      result.state = "TIMEOUT";  // still cleaning up after its time limit
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  if (!shown_once && !submitted->timed_out) {
    // The job's record is gone already (MinJobAge): sbatch --wait's status says enough.
    result.state = submitted->Succeeded() ? "COMPLETED" : "FAILED";
  }
  const std::string output = ReadAll(dir / "slurm.out");
  if (!output.empty()) result.log += "job output:\n" + output;
  return result;
}

}  // namespace kestrel
