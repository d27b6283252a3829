#include "evaluators/verdict.h"
#include "evaluators/cpu_evaluator.h"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "evaluators/calibration.h"
#include "evaluators/compare.h"
#include "evaluators/compiler.h"
#include "evaluators/shim.h"
#include "evaluators/task_layout.h"

namespace kestrel {
namespace {

constexpr std::size_t kMaxMismatches = 10;

// The checks of an outputs run, in (shape, set) order, or the reason they
// break the protocol.
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

}  // namespace

CpuEvaluator::CpuEvaluator(const Task& task, const CpuEvaluatorOptions& options) : task_(task), options_(options) {}

CpuEvaluator::~CpuEvaluator() {
  if (!owns_work_dir_) return;
  std::error_code ignored;
  std::filesystem::remove_all(work_dir_, ignored);
}

Result<std::unique_ptr<CpuEvaluator>> CpuEvaluator::Create(const Task& task, const CpuEvaluatorOptions& options) {
  const std::string context = "task " + task.name;
  if (!task.language.empty() && task.language != "cpp") {
    return Fail(Error::InvalidArgument(context + ": the cpu evaluator runs cpp kernels, not " + task.language));
  }
  if (options.input_sets < 1 || options.min_samples < 1 || !(options.min_time_s >= 0) ||
      !(options.build_timeout_s > 0) || !(options.run_timeout_s > 0)) {
    return Fail(Error::InvalidArgument("cpu evaluator: input_sets and min_samples must be >= 1, "
                                       "min_time_s >= 0 and the timeouts > 0"));
  }
  try {
    std::unique_ptr<CpuEvaluator> evaluator(new CpuEvaluator(task, options));
    if (auto ready = evaluator->Prepare(); !ready) return Fail(ready.error());
    return evaluator;
  } catch (const std::exception& e) {
    return Fail(Error::Internal(context + ": cannot set up the cpu evaluator: " + e.what()));
  } catch (...) {
    return Fail(Error::Internal(context + ": cannot set up the cpu evaluator"));
  }
}

Status CpuEvaluator::Prepare() {
  const std::string context = "task " + task_.name;
  if (!options_.runner_path.empty()) {
    runner_ = options_.runner_path;
  } else {
    auto found = DefaultRunnerPath();
    if (!found) return Fail(found.error());
    runner_ = *found;
  }
  if (options_.slurm.enabled) {
    auto limit = CheckSlurmOptions(options_.slurm);
    if (!limit) return Fail(limit.error());
    slurm_limit_s_ = *limit;
  }
  if (options_.work_dir.empty()) {
    auto made = MakeScratchDir(options_.slurm, "kestrel-eval");
    if (!made) return Fail(made.error());
    work_dir_ = *made;
    owns_work_dir_ = true;
  } else {
    work_dir_ = std::filesystem::absolute(options_.work_dir);
    std::filesystem::create_directories(work_dir_);
  }
  auto version = CompilerVersion(options_.compiler);
  if (!version) return Fail(Error::InvalidArgument("compiler '" + options_.compiler + "': " + version.error().message()));
  toolchain_ = *version;
  sandbox_ = DetectSandbox(work_dir_);
  if (options_.slurm.enabled) {
    // The measurements are taken on a compute node: its host, not this one.
    auto node = ProbeHost(Process(work_dir_ / "host"), work_dir_ / "host");
    if (!node) return Fail(node.error().WithContext("executor (slurm): cannot run a job on a compute node"));
    host_ = std::move(*node);
  } else {
    host_ = DetectHost();
  }

  auto all = LayoutShapes(task_, false);
  if (!all) return Fail(all.error());
  all_shapes_ = std::move(*all);
  timed_shapes_.assign(all_shapes_.begin(), all_shapes_.begin() + static_cast<std::ptrdiff_t>(task_.shapes.size()));

  Candidate reference{task_.reference.text, {}, toolchain_, options_.flags};
  if (auto knobs = ParseKnobs(reference.source); knobs) reference.knobs = DefaultKnobs(*knobs);
  const auto dir = work_dir_ / "reference";
  reference_build_ = BuildIn(reference, dir);
  if (!reference_build_.ok) {
    return Fail(Error::InvalidArgument(context + ": the reference " + task_.reference.name +
                                       " does not compile:\n" + reference_build_.log));
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
  if (auto rechecked = PrepareTimedRecheck(); !rechecked) return rechecked;
  return PrepareBaseline();
}

Status CpuEvaluator::PrepareBaseline() {
  if (!task_.baseline) return {};
  const std::string context = "task " + task_.name + ": the baseline " + task_.baseline->name;
  Candidate baseline{task_.baseline->text, {}, toolchain_, options_.flags};
  if (auto knobs = ParseKnobs(baseline.source); knobs) baseline.knobs = DefaultKnobs(*knobs);
  const BuildResult build = BuildIn(baseline, work_dir_ / "baseline", task_.baseline_libs);
  if (!build.ok) {
    std::string libs;
    for (const auto& lib : task_.baseline_libs) libs += " -l" + lib;
    return Fail(Error::InvalidArgument(context + " does not compile" +
                                       (libs.empty() ? "" : " or link (with" + libs + "; is the library installed?)") +
                                       ":\n" + build.log));
  }
  const Measurement measured = MeasureBuilt(build, false);
  if (measured.outcome != Outcome::kMeasured) {
    return Fail(Error::InvalidArgument(context + " fails its evaluation: " + std::string(ToString(measured.outcome)) + ": " +
                                       measured.reason + "\n" + measured.log));
  }
  baseline_speedup_ = measured.speedup;
  return {};
}

BuildResult CpuEvaluator::Build(const Candidate& candidate) {
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
  } catch (...) {
    BuildResult failed;
    failed.log = "error: cannot build: unknown exception\n";
    return failed;
  }
}

BuildResult CpuEvaluator::BuildIn(const Candidate& candidate, const std::filesystem::path& dir,
                                  const std::vector<std::string>& libs) const {
  std::filesystem::create_directories(dir);
  const auto library = dir / "kernel.so";
  if (std::filesystem::exists(library)) {  // built earlier into a kept work dir
    BuildResult cached;
    cached.ok = true;
    cached.library = library;
    return cached;
  }
  std::ofstream(dir / "kernel.cpp", std::ios::binary | std::ios::trunc) << candidate.source;
  std::ofstream(dir / "shim.cpp", std::ios::binary | std::ios::trunc) << GenerateShim(task_, "kernel.cpp");
  CompileRequest request;
  request.compiler = options_.compiler;
  request.flags = candidate.flags.empty() ? options_.flags : candidate.flags;
  for (const auto& define : candidate.KnobDefines()) request.flags.push_back(define);
  request.source = dir / "shim.cpp";
  request.library = library;
  request.libs = libs;
  request.timeout_s = options_.build_timeout_s;
  return CompileSharedLibrary(request);
}

std::filesystem::path CpuEvaluator::NewEvalDir() {
  const auto dir = work_dir_ / "evals" / std::to_string(next_eval_++);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

Measurement CpuEvaluator::Measure(const Candidate& /*candidate*/, const BuildResult& build) {
  const auto start = std::chrono::steady_clock::now();
  Measurement measurement;
  try {
    measurement = MeasureBuilt(build);
  } catch (const std::exception& e) {
    measurement = Verdict(Outcome::kRejected, std::string("evaluator error: ") + e.what(), "");
  } catch (...) {
    measurement = Verdict(Outcome::kRejected, "evaluator error: unknown exception", "");
  }
  if (build.ok) {  // the runner ran: say under which protections
    if (!measurement.log.empty() && measurement.log.back() != '\n') measurement.log += '\n';
    measurement.log += sandbox_.Summary() + "\n";
  }
  measurement.build_seconds = build.seconds;
  measurement.eval_seconds = Since(start);
  measurement.input_sets = options_.input_sets;
  measurement.seed = options_.seed;
  return measurement;
}

Measurement CpuEvaluator::MeasureBuilt(const BuildResult& build, bool judge) {
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

  // 1. Correctness, in a process of its own: every shape, every input set.
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
    // 3. What the kernel computed once it was timed must still be right.
    Measurement rechecked = RecheckTimedOutputs(time, log);
    if (rechecked.outcome != Outcome::kMeasured) return rechecked;
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
                    " us, reference " + Number(timing.reference.median * 1e6) + " us (" +
                    std::to_string(timing.candidate.count) + "/" + std::to_string(timing.reference.count) +
                    " samples" +
                    (samples.flushes > 0 && samples.flushes == timing.candidate.count
                         ? ", caches flushed before each"
                         : "") +
                    "), speedup " + Number(timing.speedup) + "\n";
    measured.shapes.push_back(std::move(timing));
  }
  measured.speedup = GeomeanSpeedup(measured.shapes);
  if (baseline_speedup_ > 0) {
    measured.baseline_speedup = baseline_speedup_;
    measured.log += "speedup over the baseline " + task_.baseline->name + ": " +
                    Number(SpeedupOverBaseline(measured.speedup, baseline_speedup_)) + " (the baseline is " +
                    Number(baseline_speedup_) + "x the reference)\n";
  }
  measured.log += log;
  return judge ? CheckPlausible(std::move(measured)) : measured;
}

int CpuEvaluator::FillRooflineFractions(Measurement& measured) const {
  std::lock_guard lock(calibration_mutex_);
  double log_sum = 0.0;
  int fractions = 0;
  int flagged = -1;
  measured.roofline_fraction = 0.0;
  for (std::size_t s = 0; s < measured.shapes.size(); ++s) {
    ShapeTiming& timing = measured.shapes[s];
    timing.roofline_fraction = 0.0;
    const double bound = RooflineSeconds(calibration_, host_, task_.Flops(timing.shape), task_.Bytes(timing.shape));
    if (bound <= 0 || timing.candidate.median <= 0) continue;
    timing.roofline_fraction = bound / timing.candidate.median;
    log_sum += std::log(timing.roofline_fraction);
    ++fractions;
    if (flagged < 0 && timing.roofline_fraction > kImplausibleFraction) flagged = static_cast<int>(s);
  }
  if (fractions > 0) measured.roofline_fraction = std::exp(log_sum / fractions);
  return flagged;
}

Measurement CpuEvaluator::CheckPlausible(Measurement measured) {
  int flagged = FillRooflineFractions(measured);
  if (flagged >= 0) {
    bool recalibrate = false;
    {
      std::lock_guard lock(calibration_mutex_);
      recalibrate = !recalibrated_;
      recalibrated_ = true;
    }
    if (recalibrate) {
      if (auto fresh = Calibrate(); fresh) {
        SetCalibration(Merge(*fresh, [this] {
          std::lock_guard lock(calibration_mutex_);
          return calibration_;
        }()));
        flagged = FillRooflineFractions(measured);
      }
    }
  }
  if (flagged >= 0) {
    const ShapeTiming& timing = measured.shapes[static_cast<std::size_t>(flagged)];
    const double bound = timing.roofline_fraction * timing.candidate.median;
    measured.outcome = Outcome::kRejected;
    measured.reason = "implausible: shape " + timed_shapes_[static_cast<std::size_t>(flagged)].label + " ran in " +
                      Number(timing.candidate.median * 1e6) + " us, " + Number(timing.roofline_fraction) +
                      "x faster than this host's roofline allows (" + Number(bound * 1e6) +
                      " us at its measured peak FLOP/s and bandwidth)";
    return measured;
  }
  const double cap = std::max(options_.max_speedup, 2 * baseline_speedup_);
  if (measured.speedup > cap) {
    measured.outcome = Outcome::kRejected;
    measured.reason = "flagged for review: speedup " + Number(measured.speedup) + " is above the cap of " +
                      Number(cap) +
                      (cap > options_.max_speedup ? " (twice the baseline's)"
                                                  : " (evaluator.max_speedup; raise it if this kernel is honest)");
  }
  return measured;
}

void CpuEvaluator::SetCalibration(const Calibration& calibration) {
  std::lock_guard lock(calibration_mutex_);
  calibration_ = calibration;
}

Result<Calibration> CpuEvaluator::Calibrate() {
  return MeasureCalibration(options_.compiler, options_.threads, host_, work_dir_ / "calibration", &options_.slurm,
                            slurm_limit_s_);
}

Result<std::unique_ptr<Evaluator>> MakeCpuEvaluator(const Task& task, const CpuEvaluatorOptions& options) {
  auto evaluator = CpuEvaluator::Create(task, options);
  if (!evaluator) return Fail(evaluator.error());
  return std::unique_ptr<Evaluator>(std::move(*evaluator));
}

}  // namespace kestrel
