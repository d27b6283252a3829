#include "evaluators/verdict.h"
#include "evaluators/command_evaluator.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/hidden_shapes.h"
#include "evaluators/command_answer.h"
#include "evaluators/build_cache.h"
#include "evaluators/code_fingerprint.h"
#include "evaluators/compiler.h"
#include "evaluators/removed_at_end.h"
#include "evaluators/subprocess.h"
#include "evaluators/task_layout.h"

namespace kestrel {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kAnswerLimitBytes = 256 * 1024 * 1024;

// The placeholder names inside `text`, or the first malformed one.
Status CheckPlaceholders(const std::string& text, const std::string& field) {
  const auto& known = CommandPlaceholders();
  for (std::size_t open = text.find('{'); open != std::string::npos; open = text.find('{', open + 1)) {
    const std::size_t close = text.find('}', open);
    const std::string name = close == std::string::npos ? text.substr(open) : text.substr(open, close - open + 1);
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (const auto& p : known) list += (list.empty() ? "" : " ") + p;
      return Fail(Error::InvalidArgument(field + ": unknown placeholder " + name + " in \"" + text +
                                         "\"; expected one of " + list));
    }
  }
  return {};
}

std::string SourceExtension(const Task& task) {
  const std::string ext = std::filesystem::path(task.seeds.empty() ? task.reference.name : task.seeds[0].name).extension();
  return ext.empty() ? ".txt" : ext;
}

// The answer file the run command wrote in `dir`, read as what it is: a
// plain file of at most `limit` bytes, opened without following a link (a
// harness that made answer.json a link to /proc/self/environ had kestrel's
// own environment, API keys and all, read into the stored log) and without
// blocking on a FIFO. nullopt and `why` when it is missing ("" then) or
// not such a file.
std::optional<std::string> ReadAnswerFile(const std::filesystem::path& dir, std::size_t limit, std::string& why) {
  why.clear();
  const int folder = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (folder < 0) {
    why = "its work folder cannot be opened";
    return std::nullopt;
  }
  const int fd = ::openat(folder, "answer.json", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  const int open_error = errno;
  ::close(folder);
  if (fd < 0) {
    if (open_error != ENOENT) why = "{answer} is not a plain file (a link, or unreadable)";
    return std::nullopt;
  }
  struct stat status {};
  std::optional<std::string> text;
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    why = "{answer} is not a plain file";
  } else if (static_cast<std::uint64_t>(status.st_size) > limit) {
    why = "the answer is larger than " + std::to_string(limit >> 20) + " MiB";
  } else {
    std::string read(static_cast<std::size_t>(status.st_size), '\0');
    std::size_t done = 0;
    while (done < read.size()) {
      const ssize_t got = ::read(fd, read.data() + done, read.size() - done);
      if (got <= 0) break;
      done += static_cast<std::size_t>(got);
    }
    read.resize(done);
    text = std::move(read);
  }
  ::close(fd);
  return text;
}

// What one run of the run command is asked: the measurement's job, or a
// hidden-shape check's (its shapes timed once each, with the check's seed).
struct HarnessJob {
  std::vector<Shape> shapes;        // timed (and checked)
  std::vector<Shape> check_shapes;  // checked only
  std::uint64_t seed = 1;
  double min_time_s = 0;
  int min_samples = 1;
  int input_sets = 1;
};

class CommandEvaluator final : public Evaluator {
 public:
  CommandEvaluator(Task task, CommandEvaluatorOptions options) : task_(std::move(task)), options_(std::move(options)) {}
  ~CommandEvaluator() override {
    if (owns_work_dir_) {
      std::error_code ignored;
      std::filesystem::remove_all(work_dir_, ignored);
    }
  }

  Status Prepare();
  BuildResult Build(const Candidate& candidate) override;
  Measurement Measure(const Candidate& candidate, const BuildResult& build) override;
  std::string Toolchain() const override { return toolchain_; }
  std::vector<std::string> Flags() const override { return {}; }
  const HostInfo& Host() const override { return host_; }
  // The profile a run command's answer carried (docs/COMMAND_PROTOCOL.md),
  // kept from the candidate's latest measurement; Kestrel takes none itself.
  bool CanProfile() const override { return true; }
  Result<Profile> ProfileBuilt(const Candidate& candidate, const BuildResult& build,
                               const Measurement& measurement) override;
  // The run command asked for the hidden shapes as its timed shapes (one
  // sample each, one input set, the check's seed): first with the reference
  // as the candidate (a harness or task that cannot take the shapes is not
  // the candidate's fault), then with the candidate.
  HiddenShapeCheck CheckHiddenShapes(const Candidate& candidate, const BuildResult& build,
                                     std::uint64_t seed) override;
  std::string SandboxGap() const override { return sandbox_.Gap(); }
  bool Unconfined() const override { return sandbox_.Unconfined(); }

 private:
  using Values = std::map<std::string, std::string>;
  // Each element with its placeholders replaced; "{knob_flags}" alone
  // becomes one element per knob.
  std::vector<std::string> Expand(const std::vector<std::string>& argv, const Values& values,
                                  const std::vector<std::string>& knob_flags) const;
  Values CandidateValues(const Candidate& candidate, const std::filesystem::path& build_dir,
                         const HarnessJob& job) const;
  HarnessJob MeasureJob() const;
  BuildResult BuildIn(const Candidate& candidate, const std::filesystem::path& dir) const;
  // The run command names {source}, {knobs}, {knob_flags} or {job} (which
  // holds both): what it does may depend on more than the built code.
  bool RunSeesCandidate() const;
  Measurement MeasureBuilt(const Candidate& candidate, const BuildResult& build);
  // One run of the run command on `job`, judged; `profile` gets the answer's.
  Measurement RunHarness(const Candidate& candidate, const BuildResult& build, const HarnessJob& job,
                         std::optional<Profile>& profile);
  Measurement FromAnswer(CommandAnswer answer, std::string log) const;
  Measurement ReadAnswer(const std::filesystem::path& dir, const std::string& nonce, const std::string& ended,
                         const HarnessJob& job, std::string log, std::optional<Profile>& profile) const;

  Task task_;
  CommandEvaluatorOptions options_;
  std::filesystem::path work_dir_;
  bool owns_work_dir_ = false;
  std::string toolchain_;
  HostInfo host_;
  std::string source_name_;
  CommandSandbox sandbox_;
  BuildCache builds_;
  std::atomic<int> next_eval_{0};
  std::mutex profiles_mutex_;
  std::map<std::string, Profile> profiles_;  // by candidate identity; guarded by profiles_mutex_
};

Status CommandEvaluator::Prepare() {
  if (auto valid = ValidateCommands(options_); !valid) return valid;
  for (const auto* argv : {&options_.build, &options_.run}) {
    // A build command that runs elsewhere is looked up there, not here.
    if (argv->empty() || (argv == &options_.build && !options_.build_executor->RunsHere())) continue;
    const std::string program = Expand({argv->front()}, {{"{task_dir}", task_.dir.string()}}, {}).front();
    if (program.find('{') == std::string::npos) {
      if (auto found = FindProgram(program); !found) {
        return Fail(Error::InvalidArgument(std::string("evaluator.") + (argv == &options_.build ? "build" : "run") +
                                           "[0]: " + found.error().message()));
      }
    }
  }
  auto work_dir = PrepareWorkDir(options_.work_dir, *options_.executor, "kestrel-command");
  if (!work_dir) return Fail(work_dir.error());
  work_dir_ = work_dir->path;
  owns_work_dir_ = work_dir->owned;
  auto sandbox = CommandSandbox::Make(options_.sandbox, work_dir_);
  if (!sandbox) return Fail(sandbox.error());
  sandbox_ = std::move(*sandbox);
  toolchain_ = "command";
  for (const auto* argv : {&options_.build, &options_.run}) {
    toolchain_ += argv == &options_.build ? " build:" : " run:";
    for (const auto& arg : *argv) toolchain_ += " " + arg;
  }
  host_ = DetectHost();
  source_name_ = "kernel" + SourceExtension(task_);

  // The set-up must at least measure the reference.
  Candidate reference{task_.reference.text, {}, toolchain_, {}};
  if (auto knobs = ParseKnobs(reference.source); knobs) reference.knobs = DefaultKnobs(*knobs);
  const Measurement checked = Evaluate(reference);
  if (checked.outcome != Outcome::kMeasured) {
    return Fail(Error::InvalidArgument("task " + task_.name + ": the command evaluator cannot measure the reference " +
                                       task_.reference.name + ": " + std::string(ToString(checked.outcome)) + ": " +
                                       checked.reason + "\n" + checked.log));
  }
  return {};
}

std::vector<std::string> CommandEvaluator::Expand(const std::vector<std::string>& argv, const Values& values,
                                                  const std::vector<std::string>& knob_flags) const {
  std::vector<std::string> out;
  for (const auto& arg : argv) {
    if (arg == "{knob_flags}") {
      out.insert(out.end(), knob_flags.begin(), knob_flags.end());
      continue;
    }
    std::string text;
    for (std::size_t i = 0; i < arg.size();) {
      bool replaced = false;
      if (arg[i] == '{') {
        const std::size_t close = arg.find('}', i);
        if (close != std::string::npos) {
          const std::string name = arg.substr(i, close - i + 1);
          if (name == "{knob_flags}") {
            for (std::size_t k = 0; k < knob_flags.size(); ++k) text += (k ? " " : "") + knob_flags[k];
            replaced = true;
          } else if (auto found = values.find(name); found != values.end()) {
            text += found->second;
            replaced = true;
          }
          if (replaced) i = close + 1;
        }
      }
      if (!replaced) text += arg[i++];
    }
    out.push_back(std::move(text));
  }
  return out;
}

CommandEvaluator::Values CommandEvaluator::CandidateValues(const Candidate& candidate,
                                                           const std::filesystem::path& build_dir,
                                                           const HarnessJob& job) const {
  Json knobs = Json::object();
  for (const auto& [name, value] : candidate.knobs) knobs[name] = value;
  Json shapes = Json::array();
  for (const auto& shape : job.shapes) shapes.push_back(shape);
  return {{"{source}", (build_dir / source_name_).string()},
          {"{build_dir}", build_dir.string()},
          {"{task_dir}", std::filesystem::absolute(task_.dir).string()},
          {"{reference}", std::filesystem::absolute(task_.dir / task_.reference.name).string()},
          {"{knobs}", knobs.dump()},
          {"{seed}", std::to_string(job.seed)},
          {"{min_time}", Number(job.min_time_s)},
          {"{min_samples}", std::to_string(job.min_samples)},
          {"{shapes}", shapes.dump()}};
}

HarnessJob CommandEvaluator::MeasureJob() const {
  return {task_.shapes,          task_.check_shapes,      options_.measure.seed, options_.measure.min_time_s,
          options_.measure.min_samples, options_.measure.input_sets};
}

BuildResult CommandEvaluator::Build(const Candidate& candidate) {
  const std::string identity = candidate.Identity();
  return builds_.Get(identity, [&] { return BuildIn(candidate, work_dir_ / "builds" / identity); });
}

bool CommandEvaluator::RunSeesCandidate() const {
  return std::any_of(options_.run.begin(), options_.run.end(), [](const std::string& element) {
    for (const char* placeholder : {"{source}", "{knobs}", "{knob_flags}", "{job}"}) {
      if (element.find(placeholder) != std::string::npos) return true;
    }
    return false;
  });
}

BuildResult CommandEvaluator::BuildIn(const Candidate& candidate, const std::filesystem::path& dir) const {
  const auto start = Clock::now();
  std::filesystem::create_directories(dir);
  std::ofstream(dir / source_name_, std::ios::binary | std::ios::trunc) << candidate.source;
  BuildResult result;
  result.library = dir / source_name_;
  if (options_.build.empty()) {
    result.ok = true;
    return result;
  }
  SubprocessOptions run;
  run.argv = Expand(options_.build, CandidateValues(candidate, dir, MeasureJob()), candidate.KnobDefines());
  run.cwd = dir;
  run.timeout_s = options_.build_timeout_s;
  run.env = EnvironmentWith({"LC_ALL=C"});
  // In the run command's sandbox, with the build folder writable: a build
  // reads the LLM's source (and may load it), so it sees only the task, the
  // binds and its own folder, none of the environment's secrets. A build on
  // a cluster's node gets no bubblewrap of this host's.
  const bool confined = sandbox_.Confined() && options_.build_executor->RunsHere();
  if (confined) run.argv = sandbox_.WrapBuild(std::move(run.argv), task_.dir, dir);
  auto ran = options_.build_executor->Run(run, "build");
  if (ran && confined) sandbox_.Unwrap(*ran);
  result.seconds = Since(start);
  if (ran && ran->withdrawn) {
    result.withdrawn = true;
    result.log = ran->lost + "\n";
    return result;
  }
  if (!ran) {
    result.log = "error: the build command cannot start: " + ran.error().message() + "\n";
    return result;
  }
  result.ok = ran->Succeeded();
  result.log = result.ok ? ran->log
                         : "build command " + ran->Describe(options_.build_timeout_s) + "\n" + TrimCompilerLog(ran->log);
  // What the build left, when it is machine code (a C harness and kernel):
  // two candidates that build to the same code are timed once (same_code).
  // The hash leaves the source out, so the run command must not see it:
  // only where the sandbox hides it (RunHarness), and not when the run
  // command is handed the candidate itself (its knobs or source): then it
  // may judge two builds of the same code differently.
  if (result.ok && sandbox_.Confined() && !RunSeesCandidate()) result.code_hash = FolderFingerprint(dir, source_name_);
  return result;
}

Measurement CommandEvaluator::Measure(const Candidate& candidate, const BuildResult& build) {
  return MeasureGuarded(build, options_.measure, [&] { return MeasureBuilt(candidate, build); });
}

Measurement CommandEvaluator::MeasureBuilt(const Candidate& candidate, const BuildResult& build) {
  if (!build.ok) return Verdict(Outcome::kBuildFailed, FirstErrorLine(build.log), build.log);
  std::optional<Profile> profile;
  Measurement measured = RunHarness(candidate, build, MeasureJob(), profile);
  if (measured.outcome == Outcome::kMeasured) {
    std::lock_guard lock(profiles_mutex_);
    if (profile) {
      profiles_[candidate.Identity()] = std::move(*profile);
    } else {
      profiles_.erase(candidate.Identity());
    }
  }
  return measured;
}

Measurement CommandEvaluator::RunHarness(const Candidate& candidate, const BuildResult& build, const HarnessJob& job,
                                         std::optional<Profile>& profile) {
  const auto dir = work_dir_ / "evals" / std::to_string(next_eval_++);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const RemovedAtEnd cleanup{dir};

  const std::string nonce = MakeNonce();
  Values values = CandidateValues(candidate, build.library.parent_path(), job);
  values["{workdir}"] = dir.string();
  values["{answer}"] = (dir / "answer.json").string();
  values["{job}"] = (dir / "job.json").string();
  values["{nonce}"] = nonce;
  Json spec = {{"task", Json::parse(task_.spec_text.empty() ? "{}" : task_.spec_text)},
               {"task_dir", values["{task_dir}"]},
               {"source", values["{source}"]},
               {"reference", values["{reference}"]},
               {"knobs", Json::parse(values["{knobs}"])},
               {"seed", job.seed},
               {"input_sets", job.input_sets},
               {"min_time_s", job.min_time_s},
               {"min_samples", job.min_samples},
               {"nonce", nonce},
               {"answer", values["{answer}"]},
               {"shapes", Json::parse(values["{shapes}"])},
               {"check_shapes", job.check_shapes}};
  std::ofstream(dir / "job.json", std::ios::binary | std::ios::trunc) << spec.dump(2);

  SubprocessOptions run;
  // A build with a code hash shares it with every build of the same code
  // from other sources: the run command must not read the source it left out.
  std::vector<std::filesystem::path> hidden;
  if (!build.code_hash.empty()) hidden.push_back(build.library.parent_path() / source_name_);
  run.argv = sandbox_.Wrap(Expand(options_.run, values, candidate.KnobDefines()), task_.dir,
                           build.library.parent_path(), dir, hidden);
  run.cwd = dir;
  run.timeout_s = options_.measure.run_timeout_s;
  auto ran = options_.executor->Run(run, "run");
  if (!ran) return Verdict(Outcome::kRejected, "the run command cannot start: " + ran.error().message(), "");
  sandbox_.Unwrap(*ran);
  std::string log = (ran->log.empty() ? "" : "run command output:\n" + ran->log) + sandbox_.Summary() + "\n";
  if (ran->withdrawn) {
    Measurement withdrawn = Verdict(Outcome::kRejected, ran->lost, log);
    withdrawn.withdrawn = true;
    return withdrawn;
  }
  if (ran->timed_out) {
    // `lost`: the scheduler's own time limit ended it, not our wall clock.
    return Verdict(Outcome::kTimedOut,
                   ran->lost.empty() ? "run command " + ran->Describe(run.timeout_s) + " (its process group was killed)"
                                     : ran->lost,
                   log);
  }
  if (!ran->lost.empty()) return Verdict(Outcome::kCrashed, ran->lost, log);
  const std::string ended = ran->Succeeded() ? "" : "run command " + ran->Describe(run.timeout_s);
  Measurement measured = ReadAnswer(dir, nonce, ended, job, std::move(log), profile);
  if (measured.outcome == Outcome::kMeasured && !ran->job.empty()) measured.log += "measured by " + ran->job + "\n";
  return measured;
}

HiddenShapeCheck CommandEvaluator::CheckHiddenShapes(const Candidate& candidate, const BuildResult& build,
                                                     std::uint64_t seed) {
  HiddenShapeCheck check;
  if (task_.shape_ranges.empty()) return check;
  if (!build.ok) {
    check.note = "not built";
    return check;
  }
  HarnessJob job{DrawHiddenShapes(task_, seed), {}, seed, 0.0, 1, 1};
  if (job.shapes.empty()) {
    check.note = "every shape drawn from the ranges is a timed or checked one";
    return check;
  }
  std::optional<Profile> ignored;
  Candidate reference{task_.reference.text, {}, toolchain_, {}};
  if (auto knobs = ParseKnobs(reference.source); knobs) reference.knobs = DefaultKnobs(*knobs);
  const Measurement own = RunHarness(reference, Build(reference), job, ignored);
  if (own.outcome != Outcome::kMeasured) {
    check.note = "the reference through the run command " + std::string(ToString(own.outcome)) +
                 " on a hidden shape (" + ToString(job.shapes.front()) + ", ...): " + own.reason +
                 "; narrow the task's shape_ranges or let the harness take any shape";
    return check;
  }
  Measurement verdict = RunHarness(candidate, build, job, ignored);
  check.shapes = job.shapes;
  // One sample of a small shape says nothing of speed: the cap is not this check's.
  const bool capped = verdict.outcome == Outcome::kRejected && verdict.reason.rfind("flagged for review", 0) == 0;
  if (verdict.outcome == Outcome::kMeasured || capped) return check;
  // Failing a size it was never shown makes it wrong, whatever way it
  // failed; the harness's words may name the sizes, so they stay in the
  // log of the check, which is not shown in a prompt.
  const Outcome outcome = verdict.outcome;
  Measurement failure = Verdict(outcome == Outcome::kRejected ? Outcome::kRejected : Outcome::kWrong,
                                "hidden shape: the run command's answer was " + std::string(ToString(outcome)),
                                "checked on " + std::to_string(check.shapes.size()) +
                                    " shapes drawn from the task's shape_ranges, with a fresh input seed; their sizes "
                                    "are not shown\n");
  check.failure = std::move(failure);
  return check;
}

Result<Profile> CommandEvaluator::ProfileBuilt(const Candidate& candidate, const BuildResult& /*build*/,
                                               const Measurement& /*measurement*/) {
  std::lock_guard lock(profiles_mutex_);
  const auto found = profiles_.find(candidate.Identity());
  if (found != profiles_.end()) return found->second;
  Profile none;
  none.unavailable.push_back(
      "command: the run command's answer carried no \"profile\" object (docs/COMMAND_PROTOCOL.md)");
  return none;
}

// The answer the run command wrote, judged; `ended` says how the command
// ended when that was not a success ("" when it was).
Measurement CommandEvaluator::ReadAnswer(const std::filesystem::path& dir, const std::string& nonce,
                                         const std::string& ended, const HarnessJob& job, std::string log,
                                         std::optional<Profile>& profile) const {
  std::string why;
  const std::optional<std::string> read = ReadAnswerFile(dir, kAnswerLimitBytes, why);
  if (!read && why.empty()) {
    if (!ended.empty()) return Verdict(Outcome::kCrashed, ended + " without an answer", log);
    return Verdict(Outcome::kRejected, "protocol violation: the run command wrote no answer to {answer}", log);
  }
  if (!read) return Verdict(Outcome::kRejected, "protocol violation: " + why, log);
  const std::string& text = *read;
  auto answer = ParseCommandAnswer(text, job.shapes, nonce, job.min_samples);
  if (!answer) {
    return Verdict(Outcome::kRejected, "protocol violation: " + answer.error().message(),
                   log + "answer (first 2000 bytes):\n" + text.substr(0, 2000) + "\n");
  }
  if (!ended.empty()) log += "note: " + ended + " after answering\n";
  profile = std::move(answer->profile);
  return FromAnswer(std::move(*answer), std::move(log));
}

Measurement CommandEvaluator::FromAnswer(CommandAnswer answer, std::string log) const {
  if (!answer.log.empty()) log = "answer log:\n" + answer.log + (answer.log.back() == '\n' ? "" : "\n") + log;
  if (answer.outcome != Outcome::kMeasured) return Verdict(answer.outcome, answer.reason, log);
  Measurement measured = Verdict(Outcome::kMeasured, "", "");
  for (auto& shape : answer.shapes) {
    // The harness's own verdict was "measured"; its error measures must
    // agree with the task's tolerance.
    if (shape.max_abs_error > task_.tolerance.atol && shape.max_rel_error > task_.tolerance.rtol) {
      return Verdict(Outcome::kWrong,
                     "answered measured, but its errors on shape " + ToString(shape.shape) + " (max abs " +
                         Number(shape.max_abs_error) + ", max rel " + Number(shape.max_rel_error) +
                         ") exceed the task's tolerance (atol " + Number(task_.tolerance.atol) + ", rtol " +
                         Number(task_.tolerance.rtol) + ")",
                     log);
    }
    ShapeTiming timing;
    timing.shape = shape.shape;
    timing.candidate = Summarize(shape.candidate_seconds);
    timing.reference = Summarize(shape.reference_seconds);
    timing.candidate_seconds = std::move(shape.candidate_seconds);
    timing.reference_seconds = std::move(shape.reference_seconds);
    timing.speedup = timing.reference.median / timing.candidate.median;
    if (const auto flops = task_.Flops(timing.shape)) timing.gflops = *flops / timing.candidate.median / 1e9;
    if (const auto bytes = task_.Bytes(timing.shape)) timing.gbps = *bytes / timing.candidate.median / 1e9;
    measured.log += "shape " + ToString(timing.shape) + ": candidate " + Number(timing.candidate.median * 1e6) +
                    " us, reference " + Number(timing.reference.median * 1e6) + " us (" +
                    std::to_string(timing.candidate.count) + "/" + std::to_string(timing.reference.count) +
                    " samples), speedup " + Number(timing.speedup) + "\n";
    measured.shapes.push_back(std::move(timing));
  }
  measured.speedup = GeomeanSpeedup(measured.shapes);
  measured.log += log;
  if (measured.speedup > options_.measure.max_speedup) {
    measured.outcome = Outcome::kRejected;
    measured.reason = "flagged for review: speedup " + Number(measured.speedup) + " is above the cap of " +
                      Number(options_.measure.max_speedup) + " (evaluator.max_speedup; raise it if this kernel is honest)";
  }
  return measured;
}

}  // namespace

const std::vector<std::string>& CommandPlaceholders() {
  static const std::vector<std::string> names = {"{source}",   "{build_dir}", "{workdir}", "{answer}",
                                                  "{job}",      "{task_dir}",  "{reference}", "{knob_flags}",
                                                  "{knobs}",    "{seed}",      "{nonce}",   "{min_time}",
                                                  "{min_samples}", "{shapes}"};
  return names;
}

Status ValidateCommands(const CommandEvaluatorOptions& options) {
  if (options.run.empty()) return Fail(Error::InvalidArgument("evaluator.run: expected a command (an argv array)"));
  for (std::size_t i = 0; i < options.build.size(); ++i) {
    if (auto ok = CheckPlaceholders(options.build[i], "evaluator.build[" + std::to_string(i) + "]"); !ok) return ok;
    for (const char* own : {"{workdir}", "{answer}", "{job}", "{nonce}"}) {
      if (options.build[i].find(own) != std::string::npos) {
        return Fail(Error::InvalidArgument("evaluator.build[" + std::to_string(i) + "]: " + own +
                                           " belongs to the run command; a build uses {build_dir}"));
      }
    }
  }
  for (std::size_t i = 0; i < options.run.size(); ++i) {
    if (auto ok = CheckPlaceholders(options.run[i], "evaluator.run[" + std::to_string(i) + "]"); !ok) return ok;
  }
  return {};
}

Result<std::unique_ptr<Evaluator>> MakeCommandEvaluator(const Task& task, const CommandEvaluatorOptions& options) {
  if (!(options.build_timeout_s > 0) || !(options.measure.run_timeout_s > 0) || options.measure.min_samples < 1 ||
      options.measure.input_sets < 1 || !(options.measure.min_time_s >= 0)) {
    return Fail(Error::InvalidArgument("evaluator (command): timeouts must be > 0, min_samples and input_sets >= 1"));
  }
  try {
    auto evaluator = std::make_unique<CommandEvaluator>(task, options);
    if (auto ready = evaluator->Prepare(); !ready) return Fail(ready.error());
    return std::unique_ptr<Evaluator>(std::move(evaluator));
  } catch (const std::exception& e) {
    return Fail(Error::Internal("task " + task.name + ": cannot set up the command evaluator: " + e.what()));
  }
}

}  // namespace kestrel
