// CudaEvaluator: the Evaluator for "language": "cuda" tasks (see
// cuda_evaluator.h and docs/CUDA.md). It follows CpuEvaluator's protocol
// (cpu_evaluator.cc) with nvcc for the compiler and kestrel-cuda-runner for
// the runner. No roofline calibration: a result is judged only against the
// speedup cap.
//
// Work dir layout: builds/<identity>/{kernel.cu,shim.cu,kernel.so},
// reference/{kernel.so,outputs.bin,timed_outputs.bin}, evals/<n>/.

#include "evaluators/verdict.h"
#include "evaluators/cuda_evaluator.h"

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>

#include "evaluators/compare.h"
#include "evaluators/compiler.h"
#include "evaluators/job.h"
#include "evaluators/runner_job.h"
#include "evaluators/subprocess.h"
#include "evaluators/task_layout.h"

namespace kestrel {
namespace {

constexpr std::size_t kMaxMismatches = 10;
constexpr std::uint64_t kRunnerFileBytes = 1ULL << 30;
constexpr double kCpuSlackSeconds = 5;

std::string CheckOrder(const JobResult& result, std::size_t shapes, int sets) {
  if (result.checks.size() != shapes * static_cast<std::size_t>(sets)) return "wrong number of checks";
  for (std::size_t i = 0; i < result.checks.size(); ++i) {
    const auto& check = result.checks[i];
    if (check.shape_index != static_cast<int>(i) / sets || check.input_set != static_cast<int>(i) % sets) {
      return "checks out of order";
    }
  }
  return "";
}

bool ValidSamples(const std::vector<double>& samples) {
  return !samples.empty() &&
         std::all_of(samples.begin(), samples.end(), [](double s) { return std::isfinite(s) && s > 0; });
}

Job TimedLayout(const Job& time) {
  Job layout = time;
  layout.mode = "outputs";
  layout.input_sets = time.buffer_sets;
  return layout;
}

std::string LastLine(const std::string& text) {
  std::string last;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (text.find_first_not_of(" \t\r", start) < end) last = text.substr(start, end - start);
    start = end + 1;
  }
  return last;
}

class CudaEvaluator final : public Evaluator {
 public:
  CudaEvaluator(const Task& task, const CudaEvaluatorOptions& options) : task_(task), options_(options) {
    if (options_.nvcc.empty()) options_.nvcc = DefaultNvcc();
  }
  ~CudaEvaluator() override {
    if (!owns_work_dir_) return;
    std::error_code ignored;
    std::filesystem::remove_all(work_dir_, ignored);
  }

  Status Prepare();
  BuildResult Build(const Candidate& candidate) override;
  Measurement Measure(const Candidate& candidate, const BuildResult& build) override;
  std::string Toolchain() const override { return toolchain_; }
  std::vector<std::string> Flags() const override { return options_.flags; }
  const HostInfo& Host() const override { return host_; }

 private:
  struct BuildSlot {
    std::mutex mutex;
    std::optional<BuildResult> result;
  };

  BuildResult BuildIn(const Candidate& candidate, const std::filesystem::path& dir) const {
    return BuildCudaCandidate(task_, candidate, dir, options_.nvcc, options_.arch, options_.flags,
                              options_.build_timeout_s);
  }
  Measurement MeasureBuilt(const BuildResult& build);
  Job MakeJob(const std::string& mode, std::vector<std::filesystem::path> libraries, bool timed_only) const;
  JobRun RunJob(const Job& job, const std::filesystem::path& dir, const std::string& phase) const;
  std::filesystem::path NewEvalDir();

  Task task_;
  CudaEvaluatorOptions options_;
  std::filesystem::path work_dir_;
  bool owns_work_dir_ = false;
  std::filesystem::path runner_;
  std::string toolchain_;
  HostInfo host_;
  std::int64_t l2_bytes_ = 0;
  double slurm_limit_s_ = 0;  // options_.slurm.time_limit in seconds
  std::vector<JobShape> all_shapes_;
  std::vector<JobShape> timed_shapes_;
  BuildResult reference_build_;
  std::filesystem::path reference_outputs_;
  std::filesystem::path reference_timed_outputs_;
  std::mutex builds_mutex_;
  std::map<std::string, std::shared_ptr<BuildSlot>> builds_;
  std::atomic<int> next_eval_{0};
};

Status CudaEvaluator::Prepare() {
  const std::string context = "task " + task_.name;
  if (!options_.runner_path.empty()) {
    runner_ = options_.runner_path;
  } else {
    auto found = DefaultCudaRunnerPath();
    if (!found) return Fail(found.error());
    runner_ = *found;
  }
  // The toolchain: nvcc's release line and the target architecture.
  SubprocessOptions version;
  version.argv = {options_.nvcc, "--version"};
  version.env = EnvironmentWith({"LC_ALL=C"});
  version.timeout_s = 30;
  auto ran = RunSubprocess(version);
  if (!ran) return Fail(Error::NotFound("nvcc '" + options_.nvcc + "': " + ran.error().message()));
  if (!ran->Succeeded()) return Fail(Error::InvalidArgument("nvcc '" + options_.nvcc + "' --version " + ran->Describe(30)));
  toolchain_ = "nvcc " + LastLine(ran->log) + " -arch=" + options_.arch;

  if (options_.slurm.enabled) {
    auto limit = CheckSlurmOptions(options_.slurm);
    if (!limit) return Fail(limit.error());
    slurm_limit_s_ = *limit;
  }
  if (options_.work_dir.empty()) {
    auto made = MakeScratchDir(options_.slurm, "kestrel-cuda");
    if (!made) return Fail(made.error());
    work_dir_ = *made;
    owns_work_dir_ = true;
  } else {
    work_dir_ = std::filesystem::absolute(options_.work_dir);
    std::filesystem::create_directories(work_dir_);
  }
  std::filesystem::create_directories(work_dir_ / "probe");
  // Under Slurm the probe is a job: the devices and host of a compute node.
  const CudaDeviceReport devices = ProbeCudaDevices(runner_, &options_.slurm, slurm_limit_s_, work_dir_ / "probe");
  if (devices.devices <= 0) {
    return Fail(Error::Unsupported(context + ": no CUDA device found (" + devices.detail +
                                   "); the cuda evaluator needs an NVIDIA GPU and its driver"));
  }
  l2_bytes_ = devices.l2_bytes;
  host_ = devices.host;
  host_.cpu_model += " + " + devices.detail.substr(0, devices.detail.find(" (Slurm job"));

  auto all = LayoutShapes(task_, false);
  if (!all) return Fail(all.error());
  all_shapes_ = std::move(*all);
  timed_shapes_.assign(all_shapes_.begin(), all_shapes_.begin() + static_cast<std::ptrdiff_t>(task_.shapes.size()));

  Candidate reference{task_.reference.text, {}, toolchain_, options_.flags};
  if (auto knobs = ParseKnobs(reference.source); knobs) reference.knobs = DefaultKnobs(*knobs);
  const auto dir = work_dir_ / "reference";
  reference_build_ = BuildIn(reference, dir);
  if (!reference_build_.ok) {
    return Fail(Error::InvalidArgument(context + ": the reference " + task_.reference.name + " does not compile:\n" +
                                       reference_build_.log));
  }
  Job job = MakeJob("outputs", {reference_build_.library}, false);
  job.output_file = reference_outputs_ = dir / "outputs.bin";
  JobRun run = RunJob(job, dir, "running the reference");
  if (run.failure) {
    return Fail(Error::InvalidArgument(context + ": the reference " + std::string(ToString(run.failure->outcome)) +
                                       ": " + run.failure->reason + "\n" + run.failure->log));
  }
  if (auto order = CheckOrder(run.result, all_shapes_.size(), options_.input_sets); !order.empty()) {
    return Fail(Error::Internal(context + ": the reference's runner: " + order));
  }
  for (const auto& check : run.result.checks) {
    const std::string where = " (shape " + all_shapes_[check.shape_index].label + ")";
    if (!check.inputs_modified.empty()) {
      return Fail(Error::InvalidArgument(context + ": the reference modifies its input " +
                                         check.inputs_modified.front() + where));
    }
    if (check.nondeterministic) {
      return Fail(Error::InvalidArgument(context + ": the reference is non-deterministic" + where));
    }
  }
  if (auto varies = CheckReferenceVaries(job, reference_outputs_, task_.tolerance, static_cast<int>(task_.shapes.size()));
      !varies) {
    return Fail(varies.error().code() == ErrorCode::kInvalidArgument ? varies.error().WithContext(context)
                                                                     : varies.error());
  }
  for (const auto& shape : timed_shapes_) {
    for (const auto& arg : shape.args) {
      if (arg.role == ArgRole::kInOut) return {};  // its values change call after call: no re-check
    }
  }
  const auto file = dir / "timed_outputs.bin";
  if (auto sliced = SliceOutputs(MakeJob("outputs", {}, false), reference_outputs_,
                                 TimedLayout(MakeJob("time", {}, true)), file);
      !sliced) {
    return Fail(sliced.error());
  }
  reference_timed_outputs_ = file;
  return {};
}

BuildResult CudaEvaluator::Build(const Candidate& candidate) {
  try {
    const std::string identity = candidate.Identity();
    std::shared_ptr<BuildSlot> slot;
    {
      std::lock_guard<std::mutex> lock(builds_mutex_);
      auto& entry = builds_[identity];
      if (!entry) entry = std::make_shared<BuildSlot>();
      slot = entry;
    }
    std::lock_guard<std::mutex> lock(slot->mutex);
    if (!slot->result) slot->result = BuildIn(candidate, work_dir_ / "builds" / identity);
    return *slot->result;
  } catch (const std::exception& e) {
    BuildResult failed;
    failed.log = std::string("error: cannot build: ") + e.what() + "\n";
    return failed;
  }
}

std::filesystem::path CudaEvaluator::NewEvalDir() {
  const auto dir = work_dir_ / "evals" / std::to_string(next_eval_++);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

Measurement CudaEvaluator::Measure(const Candidate& /*candidate*/, const BuildResult& build) {
  const auto start = std::chrono::steady_clock::now();
  Measurement measurement;
  try {
    measurement = MeasureBuilt(build);
  } catch (const std::exception& e) {
    measurement = Verdict(Outcome::kRejected, std::string("evaluator error: ") + e.what(), "");
  } catch (...) {
    measurement = Verdict(Outcome::kRejected, "evaluator error: unknown exception", "");
  }
  measurement.build_seconds = build.seconds;
  measurement.eval_seconds = Since(start);
  measurement.input_sets = options_.input_sets;
  measurement.seed = options_.seed;
  return measurement;
}

Measurement CudaEvaluator::MeasureBuilt(const BuildResult& build) {
  if (!build.ok) return Verdict(Outcome::kBuildFailed, FirstErrorLine(build.log), build.log);
  if (!std::filesystem::exists(build.library)) {
    return Verdict(Outcome::kRejected, "evaluator error: " + build.library.string() + " does not exist", "");
  }
  const auto dir = NewEvalDir();
  struct Cleanup {
    std::filesystem::path dir;
    ~Cleanup() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  } cleanup{dir};

  // 1. Correctness: every shape, every input set.
  Job outputs = MakeJob("outputs", {build.library}, false);
  outputs.output_file = dir / "outputs.bin";
  JobRun checked = RunJob(outputs, dir, "checking outputs");
  if (checked.failure) return *checked.failure;
  std::string log = checked.log.empty() ? "" : "runner output (checking outputs):\n" + checked.log;
  if (auto order = CheckOrder(checked.result, all_shapes_.size(), options_.input_sets); !order.empty()) {
    return Verdict(Outcome::kRejected, "runner protocol violation: " + order, log);
  }
  for (const auto& check : checked.result.checks) {
    const std::string where =
        " (shape " + all_shapes_[check.shape_index].label + ", input set " + std::to_string(check.input_set) + ")";
    if (!check.inputs_modified.empty()) {
      return Verdict(Outcome::kWrong, "modified its input " + check.inputs_modified.front() + where, log);
    }
    if (check.nondeterministic) {
      return Verdict(Outcome::kWrong, "non-deterministic: two calls on the same inputs differ" + where, log);
    }
  }
  auto comparison = CompareOutputs(outputs, reference_outputs_, outputs.output_file, task_.tolerance, kMaxMismatches);
  if (!comparison) {
    const bool protocol = comparison.error().code() == ErrorCode::kCorruption;
    return Verdict(Outcome::kRejected,
                   (protocol ? "runner protocol violation: " : "evaluator error: ") + comparison.error().message(), log);
  }
  std::filesystem::remove(outputs.output_file);
  if (!comparison->ok) {
    Measurement wrong = Verdict(Outcome::kWrong, comparison->reason, "");
    wrong.log = comparison->details + "worst mismatches (shape, set, element: expected, actual):\n";
    for (const auto& m : comparison->worst) {
      wrong.log += "  " + all_shapes_[m.shape_index].label + ", set " + std::to_string(m.input_set) + ", " + m.arg +
                   "[" + std::to_string(m.index) + "]: " + Number(m.expected) + ", " + Number(m.actual) + "\n";
    }
    wrong.log += log;
    wrong.mismatches = std::move(comparison->worst);
    return wrong;
  }

  // 2. Timing: candidate and reference interleaved in one process.
  Job time = MakeJob("time", {build.library, reference_build_.library}, true);
  if (!reference_timed_outputs_.empty()) time.timed_output_file = dir / "timed_outputs.bin";
  JobRun timed = RunJob(time, dir, "timing");
  if (timed.failure) return *timed.failure;
  if (!timed.log.empty()) log += "runner output (timing):\n" + timed.log;
  if (!time.timed_output_file.empty()) {
    auto recheck = CompareOutputs(TimedLayout(time), reference_timed_outputs_, time.timed_output_file,
                                  task_.tolerance, kMaxMismatches);
    if (!recheck) return Verdict(Outcome::kRejected, "runner protocol violation: " + recheck.error().message(), log);
    if (!recheck->ok) {
      Measurement wrong =
          Verdict(Outcome::kWrong, "outputs produced while timing differ: " + recheck->reason, recheck->details + log);
      wrong.mismatches = std::move(recheck->worst);
      return wrong;
    }
  }
  if (timed.result.timings.size() != timed_shapes_.size()) {
    return Verdict(Outcome::kRejected, "runner protocol violation: wrong number of timed shapes", log);
  }
  Measurement measured = Verdict(Outcome::kMeasured, "", "");
  for (std::size_t s = 0; s < timed_shapes_.size(); ++s) {
    auto& samples = timed.result.timings[s];
    if (!ValidSamples(samples.candidate) || !ValidSamples(samples.reference)) {
      return Verdict(Outcome::kRejected, "runner protocol violation: invalid timing samples", log);
    }
    ShapeTiming timing;
    timing.shape = task_.shapes[s];
    timing.candidate = Summarize(samples.candidate);
    timing.reference = Summarize(samples.reference);
    timing.candidate_seconds = std::move(samples.candidate);
    timing.reference_seconds = std::move(samples.reference);
    timing.candidate_calls_per_sample = samples.candidate_batch;
    timing.reference_calls_per_sample = samples.reference_batch;
    timing.speedup = timing.reference.median / timing.candidate.median;
    if (const auto flops = task_.Flops(timing.shape)) timing.gflops = *flops / timing.candidate.median / 1e9;
    if (const auto bytes = task_.Bytes(timing.shape)) timing.gbps = *bytes / timing.candidate.median / 1e9;
    measured.log += "shape " + timed_shapes_[s].label + ": candidate " + Number(timing.candidate.median * 1e6) +
                    " us, reference " + Number(timing.reference.median * 1e6) + " us (CUDA events; " +
                    std::to_string(timing.candidate.count) + "/" + std::to_string(timing.reference.count) +
                    " samples" + (samples.flushes > 0 ? ", L2 flushed before each" : "") + "), speedup " +
                    Number(timing.speedup) + "\n";
    measured.shapes.push_back(std::move(timing));
  }
  measured.speedup = GeomeanSpeedup(measured.shapes);
  measured.log += log;
  if (measured.speedup > options_.max_speedup) {
    measured.outcome = Outcome::kRejected;
    measured.reason = "flagged for review: speedup " + Number(measured.speedup) + " is above the cap of " +
                      Number(options_.max_speedup) + " (max_speedup; raise it if this kernel is honest)";
  }
  return measured;
}

Job CudaEvaluator::MakeJob(const std::string& mode, std::vector<std::filesystem::path> libraries,
                           bool timed_only) const {
  Job job;
  job.mode = mode;
  job.libraries = std::move(libraries);
  job.seed = options_.seed;
  job.input_sets = options_.input_sets;
  job.shapes = timed_only ? timed_shapes_ : all_shapes_;
  job.min_time_s = options_.min_time_s;
  job.min_samples = options_.min_samples;
  job.buffer_sets = std::min(2, options_.input_sets);
  // The runner flushes at least 2x the device's L2 whatever this says; > 0 turns flushing on.
  if (options_.flush_l2) job.flush_bytes = std::max<std::int64_t>(2 * l2_bytes_, 1);
  job.seccomp = false;  // the CUDA driver needs ioctls: kestrel-cuda-runner installs no filter
  return job;
}

JobRun CudaEvaluator::RunJob(const Job& job, const std::filesystem::path& dir, const std::string& phase) const {
  RunnerProcess process;
  process.name = "kestrel-cuda-runner";
  process.argv = {runner_.string()};
  process.timeout_s = options_.run_timeout_s;
  process.cpu_limit_s = options_.run_timeout_s * 2 + kCpuSlackSeconds;  // the driver runs threads of its own
  // No RLIMIT_AS: the CUDA driver maps the GPU's memory into the address space.
  process.file_size_limit_bytes = kRunnerFileBytes;
  process.slurm = &options_.slurm;
  process.slurm_limit_s = slurm_limit_s_;
  return RunRunnerJob(process, job, dir, phase);
}

}  // namespace

Result<std::unique_ptr<Evaluator>> MakeCudaEvaluator(const Task& task, const CudaEvaluatorOptions& options) {
  const std::string context = "task " + task.name;
  if (task.language != "cuda") {
    return Fail(Error::InvalidArgument(context + ": the cuda evaluator runs cuda kernels, not " +
                                       (task.language.empty() ? std::string("cpp") : task.language)));
  }
  if (options.input_sets < 1 || options.min_samples < 1 || !(options.min_time_s >= 0) ||
      !(options.build_timeout_s > 0) || !(options.run_timeout_s > 0)) {
    return Fail(Error::InvalidArgument("cuda evaluator: input_sets and min_samples must be >= 1, "
                                       "min_time_s >= 0 and the timeouts > 0"));
  }
  try {
    auto evaluator = std::make_unique<CudaEvaluator>(task, options);
    if (auto ready = evaluator->Prepare(); !ready) return Fail(ready.error());
    return std::unique_ptr<Evaluator>(std::move(evaluator));
  } catch (const std::exception& e) {
    return Fail(Error::Internal(context + ": cannot set up the cuda evaluator: " + e.what()));
  }
}

}  // namespace kestrel
