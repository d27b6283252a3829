#include "evaluators/cpu_evaluator.h"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "evaluators/calibration.h"
#include "evaluators/compare.h"
#include "evaluators/compiler_remarks.h"
#include "evaluators/code_fingerprint.h"
#include "evaluators/compiler.h"
#include "evaluators/judge.h"
#include "evaluators/shim.h"
#include "evaluators/task_layout.h"
#include "evaluators/verdict.h"

namespace kestrel {
namespace {

}  // namespace

CpuEvaluator::CpuEvaluator(const Task& task, const CpuEvaluatorOptions& options) : task_(task), options_(options) {}

CpuEvaluator::~CpuEvaluator() {
  pool_.reset();  // its supervisors work in the work dir
  if (!owns_work_dir_) return;
  std::error_code ignored;
  std::filesystem::remove_all(work_dir_, ignored);
}

Result<std::unique_ptr<CpuEvaluator>> CpuEvaluator::Create(const Task& task, const CpuEvaluatorOptions& options) {
  const std::string context = "task " + task.name;
  if (!task.language.empty() && task.language != "cpp") {
    return Fail(Error::InvalidArgument(context + ": the cpu evaluator runs cpp kernels, not " + task.language));
  }
  if (options.measure.input_sets < 1 || options.measure.min_samples < 1 || !(options.measure.min_time_s >= 0) ||
      !(options.build_timeout_s > 0) || !(options.measure.run_timeout_s > 0)) {
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
  if (!options_.worker_path.empty()) {
    worker_ = options_.worker_path;
  } else {
    auto found = DefaultWorkerPath();
    if (!found) return Fail(found.error());
    worker_ = *found;
  }
  auto work_dir = PrepareWorkDir(options_.work_dir, *options_.executor, "kestrel-eval");
  if (!work_dir) return Fail(work_dir.error());
  work_dir_ = work_dir->path;
  owns_work_dir_ = work_dir->owned;
  if (options_.executor->RunsHere()) pool_ = std::make_unique<RunnerPool>(work_dir_ / "runners");
  auto version = CompilerVersion(options_.compiler, *options_.build_executor, work_dir_);
  if (!version) return Fail(Error::InvalidArgument("compiler '" + options_.compiler + "': " + version.error().message()));
  toolchain_ = *version;
  // Probed here, not through a scheduler: where builds run as Slurm jobs a
  // profile compiles for its remarks as before, rather than every run
  // paying one more job at its start.
  build_remarks_ = options_.build_executor->RunsHere() &&
                   AcceptsRemarkFile(options_.compiler, toolchain_, *options_.build_executor, work_dir_);
  if (options_.sandbox != "auto" && options_.sandbox != "none") {
    return Fail(Error::InvalidArgument("evaluator.sandbox: expected \"auto\" or \"none\", got \"" + options_.sandbox + "\""));
  }
  sandbox_ = SandboxFor(options_.sandbox, work_dir_);
  if (!options_.executor->RunsHere()) {
    // The measurements are taken on a compute node: its host, not this one.
    auto node = ProbeHost(*options_.executor, Process(work_dir_ / "host"), work_dir_ / "host");
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
  reference_outputs_ = dir / "outputs.bin";
  inputs_file_ = dir / "inputs.bin";
  const Job job = MakeJob("outputs", {reference_build_.library}, false);
  const PreparedLayout layout = PrepareLayout(job);
  inputs_bytes_ = layout.bytes;
  inputs_hash_ = layout.layout_hash;
  JobRun run = RunReferenceOutputs(reference_outputs_, true);
  if (run.failure) {
    return Fail(Error::InvalidArgument(context + ": the reference " + std::string(ToString(run.failure->outcome)) +
                                       ": " + run.failure->reason + "\n" + run.failure->log));
  }
  if (auto judged = JudgeReferenceRun(Context(), job, run.result, reference_outputs_); !judged) return judged;
  auto timed_outputs = PrepareTimedOutputs(Context(), MakeJob("outputs", {}, false), MakeJob("time", {}, true),
                                           reference_outputs_, dir / "timed_outputs.bin");
  if (!timed_outputs) return Fail(timed_outputs.error());
  reference_timed_outputs_ = *timed_outputs;
  return PrepareBaseline();
}

JobRun CpuEvaluator::RunReferenceOutputs(const std::filesystem::path& outputs, bool prepare_inputs) {
  const auto dir = work_dir_ / "reference";
  Job job = MakeJob("outputs", {reference_build_.library}, false);
  job.output_file = outputs;
  if (prepare_inputs) {
    job.prepare_inputs = true;
    job.inputs_file = dir / "inputs.bin.new";
  }
  JobRun run = RunJob(job, dir, "running the reference");
  if (prepare_inputs && !run.failure) {
    std::error_code error;
    std::filesystem::rename(job.inputs_file, inputs_file_, error);
    if (error) {
      run.failure = Verdict(Outcome::kRejected, "evaluator error: cannot keep the prepared inputs " +
                                                    inputs_file_.string() + ": " + error.message(), run.log);
    }
  }
  return run;
}

Status CpuEvaluator::EnsurePreparedInputs() {
  std::lock_guard lock(inputs_mutex_);
  std::error_code error;
  const auto size = std::filesystem::file_size(inputs_file_, error);
  if (!error && size == inputs_bytes_) {
    // The header names the layout it was drawn for (job.h).
    char header[24] = {};
    std::ifstream(inputs_file_, std::ios::binary).read(header, sizeof header);
    std::uint64_t hash = 0, bytes = 0;
    std::memcpy(&hash, header + 8, sizeof hash);
    std::memcpy(&bytes, header + 16, sizeof bytes);
    if (std::memcmp(header, kPreparedMagic, sizeof kPreparedMagic) == 0 && hash == inputs_hash_ && bytes == size) {
      return {};
    }
  }
  // Drawn again into a fresh file; the reference's outputs are the same
  // bytes and are written aside, so that no evaluation in flight reads a
  // file being written.
  const auto aside = work_dir_ / "reference" / "outputs.again.bin";
  JobRun run = RunReferenceOutputs(aside, true);
  std::filesystem::remove(aside, error);
  if (run.failure) {
    return Fail(Error::Io("cannot prepare the inputs again: " + run.failure->reason));
  }
  return {};
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
  // The baseline is the task's own code, trusted like its reference; its
  // library may JIT-compile (oneDNN), which a candidate may never.
  const Measurement measured = MeasureBuilt(build, false, true);
  if (measured.outcome != Outcome::kMeasured) {
    return Fail(Error::InvalidArgument(context + " fails its evaluation: " + std::string(ToString(measured.outcome)) + ": " +
                                       measured.reason + "\n" + measured.log));
  }
  baseline_speedup_ = measured.speedup;
  return {};
}

BuildResult CpuEvaluator::Build(const Candidate& candidate) {
  const std::string identity = candidate.Identity();
  return builds_.Get(identity, [&] {
    BuildResult build = BuildIn(candidate, work_dir_ / "builds" / identity);
    // In the compile stage, off the measurement's path; kept by the cache with the build.
    if (build.ok) build.code_hash = CodeFingerprint(build.library);
    return build;
  });
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
  return CompileSharedLibrary(CompileRequestFor(candidate, dir, libs));
}

CompileRequest CpuEvaluator::CompileRequestFor(const Candidate& candidate, const std::filesystem::path& dir,
                                               const std::vector<std::string>& libs) const {
  CompileRequest request;
  request.compiler = options_.compiler;
  request.flags = candidate.flags.empty() ? options_.flags : candidate.flags;
  for (const auto& define : candidate.KnobDefines()) request.flags.push_back(define);
  request.source = dir / "shim.cpp";
  request.library = dir / "kernel.so";
  request.libs = libs;
  request.timeout_s = options_.build_timeout_s;
  request.executor = options_.build_executor;
  // Compiled in the sandbox when it is here and the build is too.
  if (sandbox_.bwrap && !sandbox_.unconfined && request.executor->RunsHere()) request.bwrap = sandbox_.bwrap_path;
  if (build_remarks_) request.remarks_file = kRemarksFile;
  return request;
}

std::filesystem::path CpuEvaluator::NewEvalDir() {
  const auto dir = work_dir_ / "evals" / std::to_string(next_eval_++);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

Measurement CpuEvaluator::Measure(const Candidate& /*candidate*/, const BuildResult& build) {
  return MeasureGuarded(build, options_.measure, [&] {
    Measurement measurement = MeasureBuilt(build);
    if (build.ok) {  // the runner ran: say under which protections
      if (!measurement.log.empty() && measurement.log.back() != '\n') measurement.log += '\n';
      measurement.log += sandbox_.Summary() + "\n";
    }
    return measurement;
  });
}

Measurement CpuEvaluator::MeasureBuilt(const BuildResult& build, bool judge, bool jit) {
  if (!build.ok) return Verdict(Outcome::kBuildFailed, FirstErrorLine(build.log), build.log);
  if (!std::filesystem::exists(build.library)) {
    return Verdict(Outcome::kRejected, "evaluator error: " + build.library.string() + " does not exist", "");
  }
  if (auto prepared = EnsurePreparedInputs(); !prepared) {
    return Verdict(Outcome::kRejected, "evaluator error: " + prepared.error().message(), "");
  }
  const auto run_job = [this](const Job& job, const std::filesystem::path& in, const std::string& phase) {
    return RunJob(job, in, phase);
  };
  Job outputs = MakeJob("outputs", {build.library}, false);
  Job time = MakeJob("time", {build.library, reference_build_.library}, true);
  outputs.allow_jit = time.allow_jit = jit;
  Judged judged = CheckAndTimeInOneJob(Context(), run_job, std::move(outputs), std::move(time), NewEvalDir(),
                                       {reference_outputs_, reference_timed_outputs_}, "", "caches");
  Measurement& measured = judged.measurement;
  if (measured.outcome != Outcome::kMeasured) return measured;
  if (baseline_speedup_ > 0) {
    measured.baseline_speedup = baseline_speedup_;
    measured.log += "speedup over the baseline " + task_.baseline->name + ": " +
                    Number(SpeedupOverBaseline(measured.speedup, baseline_speedup_)) + " (the baseline is " +
                    Number(baseline_speedup_) + "x the reference)\n";
  }
  measured.log += judged.runner_log;
  return judge ? CheckPlausible(std::move(measured)) : measured;
}

int CpuEvaluator::FillRooflineFractions(Measurement& measured, std::vector<int>* unusable) const {
  std::lock_guard lock(calibration_mutex_);
  double log_sum = 0.0;
  int fractions = 0;
  int flagged = -1;
  measured.roofline_fraction = 0.0;
  if (unusable != nullptr) unusable->clear();
  for (std::size_t s = 0; s < measured.shapes.size(); ++s) {
    ShapeTiming& timing = measured.shapes[s];
    timing.roofline_fraction = 0.0;
    const double bound = RooflineSeconds(calibration_, host_, task_.Flops(timing.shape), task_.Bytes(timing.shape));
    if (bound <= 0 || timing.candidate.median <= 0) continue;
    // The reference is the task's own plain code: when it too beats the
    // bound, the task's flops or bytes formula overstates the work (or the
    // calibration is off), and the bound judges nothing on this shape.
    if (timing.reference.median > 0 && bound / timing.reference.median > kImplausibleFraction) {
      if (unusable != nullptr) unusable->push_back(static_cast<int>(s));
      continue;
    }
    timing.roofline_fraction = bound / timing.candidate.median;
    log_sum += std::log(timing.roofline_fraction);
    ++fractions;
    if (flagged < 0 && timing.roofline_fraction > kImplausibleFraction) flagged = static_cast<int>(s);
  }
  if (fractions > 0) measured.roofline_fraction = std::exp(log_sum / fractions);
  return flagged;
}

Measurement CpuEvaluator::CheckPlausible(Measurement measured) {
  std::vector<int> unusable;
  int flagged = FillRooflineFractions(measured, &unusable);
  if (flagged >= 0 || !unusable.empty()) {
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
        flagged = FillRooflineFractions(measured, &unusable);
      }
    }
  }
  for (const int s : unusable) {
    const ShapeTiming& timing = measured.shapes[static_cast<std::size_t>(s)];
    std::lock_guard lock(calibration_mutex_);
    const double bound = RooflineSeconds(calibration_, host_, task_.Flops(timing.shape), task_.Bytes(timing.shape));
    measured.log += "roofline: the reference itself ran shape " + timed_shapes_[static_cast<std::size_t>(s)].label +
                    " in " + Number(timing.reference.median * 1e6) + " us, " + Number(bound / timing.reference.median) +
                    "x faster than this host's roofline allows: task.json's flops or bytes formula overstates the "
                    "work, and the shape has no roofline fraction (nor a roofline check)\n";
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
  const double cap = std::max(options_.measure.max_speedup, 2 * baseline_speedup_);
  if (measured.speedup > cap) {
    measured.outcome = Outcome::kRejected;
    measured.reason = "flagged for review: speedup " + Number(measured.speedup) + " is above the cap of " +
                      Number(cap) +
                      (cap > options_.measure.max_speedup ? " (twice the baseline's)"
                                                  : " (evaluator.max_speedup; raise it if this kernel is honest)");
  }
  return measured;
}

void CpuEvaluator::SetCalibration(const Calibration& calibration) {
  std::lock_guard lock(calibration_mutex_);
  calibration_ = calibration;
}

Result<Calibration> CpuEvaluator::Calibrate() {
  return MeasureCalibration(options_.compiler, options_.threads, host_, work_dir_ / "calibration",
                            *options_.build_executor, *options_.executor);
}

Result<std::unique_ptr<Evaluator>> MakeCpuEvaluator(const Task& task, const CpuEvaluatorOptions& options) {
  auto evaluator = CpuEvaluator::Create(task, options);
  if (!evaluator) return Fail(evaluator.error());
  return std::unique_ptr<Evaluator>(std::move(*evaluator));
}

}  // namespace kestrel
