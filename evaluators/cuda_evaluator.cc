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
#include "evaluators/build_cache.h"
#include "evaluators/compiler.h"
#include "evaluators/job.h"
#include "evaluators/cpu_evaluator.h"
#include "evaluators/hidden_shape_check.h"
#include "evaluators/judge.h"
#include "evaluators/profile_sources.h"
#include "evaluators/runner_job.h"
#include "evaluators/sandbox.h"
#include "evaluators/sandbox_args.h"
#include "evaluators/subprocess.h"
#include "evaluators/task_layout.h"

namespace kestrel {
namespace {


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
  // The time per element of each shape; Nsight Compute's metrics are not
  // taken yet: the profile says whether ncu could run here (docs/PROFILES.md).
  bool CanProfile() const override { return true; }
  Result<Profile> ProfileBuilt(const Candidate& /*candidate*/, const BuildResult& build,
                               const Measurement& measurement) override {
    if (!build.ok || measurement.outcome != Outcome::kMeasured) {
      return Fail(Error::InvalidArgument("profile: the candidate has no measured result to profile"));
    }
    Profile profile;
    profile.scaling = TimePerElement(task_, measurement);
    const std::string ncu = NcuUnavailableReason();
    profile.unavailable.push_back(ncu.empty() ? "ncu: Nsight Compute and a GPU are here, but Kestrel does not run ncu yet"
                                              : ncu);
    return profile;
  }
  // The reference and the candidate in outputs jobs on shapes drawn from
  // the task's shape_ranges (hidden_shape_check.h), on the GPU.
  HiddenShapeCheck CheckHiddenShapes(const Candidate& /*candidate*/, const BuildResult& build,
                                     std::uint64_t seed) override {
    if (task_.shape_ranges.empty()) return {};
    return CheckHiddenShapesWithRunner(
        task_, MakeJob("outputs", {reference_build_.library}, false), build, seed, NewEvalDir(),
        [this](const Job& job, const std::filesystem::path& in, const std::string& phase) { return RunJob(job, in, phase); });
  }
  std::string SandboxGap() const override { return gap_; }
  bool Unconfined() const override { return options_.sandbox == "none"; }

 private:
  Status PrepareSandbox();
  // The command line the runner runs under for a job loading `libraries`
  // and writing in `dir` (empty: no sandbox).
  std::vector<std::string> Sandboxed(const std::vector<std::filesystem::path>& libraries,
                                     const std::filesystem::path& dir) const;
  std::string SandboxLine() const;

  BuildResult BuildIn(const Candidate& candidate, const std::filesystem::path& dir) const {
    return BuildCudaCandidate(task_, candidate, dir, options_.nvcc, options_.arch, options_.flags,
                              options_.build_timeout_s, options_.build_executor, bwrap_);
  }
  Measurement MeasureBuilt(const BuildResult& build);
  JudgeContext Context() const { return {&task_, &all_shapes_, &timed_shapes_, options_.measure.input_sets}; }
  Job MakeJob(const std::string& mode, std::vector<std::filesystem::path> libraries, bool timed_only) const;
  JobRun RunJob(const Job& job, const std::filesystem::path& dir, const std::string& phase) const;
  std::filesystem::path NewEvalDir();

  Task task_;
  CudaEvaluatorOptions options_;
  std::filesystem::path work_dir_;
  bool owns_work_dir_ = false;
  std::filesystem::path runner_;
  std::string bwrap_;  // empty: the runner runs unconfined
  std::filesystem::path confine_;
  std::string gap_;    // why it does, when not by the user's choice
  std::string toolchain_;
  HostInfo host_;
  std::int64_t l2_bytes_ = 0;
  std::vector<JobShape> all_shapes_;
  std::vector<JobShape> timed_shapes_;
  BuildResult reference_build_;
  std::filesystem::path reference_outputs_;
  std::filesystem::path reference_timed_outputs_;
  BuildCache builds_;
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
  auto work_dir = PrepareWorkDir(options_.work_dir, *options_.executor, "kestrel-cuda");
  if (!work_dir) return Fail(work_dir.error());
  work_dir_ = work_dir->path;
  owns_work_dir_ = work_dir->owned;
  if (auto sandbox = PrepareSandbox(); !sandbox) return sandbox;
  // The toolchain: nvcc's release line and the target architecture (the
  // nodes' nvcc when builds are Slurm jobs).
  SubprocessOptions version;
  version.argv = {options_.nvcc, "--version"};
  version.env = EnvironmentWith({"LC_ALL=C"});
  version.timeout_s = 30;
  version.cwd = work_dir_;
  auto ran = options_.build_executor->Run(version, "nvcc-version");
  if (!ran) return Fail(Error::NotFound("nvcc '" + options_.nvcc + "': " + ran.error().message()));
  if (!ran->Succeeded()) return Fail(Error::InvalidArgument("nvcc '" + options_.nvcc + "' --version " + ran->Describe(30)));
  toolchain_ = "nvcc " + NvccRelease(ran->log) + " -arch=" + options_.arch;
  std::filesystem::create_directories(work_dir_ / "probe");
  // Under Slurm the probe is a job: the devices and host of a compute node.
  const auto probe_dir = work_dir_ / "probe";
  const CudaDeviceReport devices =
      ProbeCudaDevices(runner_, *options_.executor, probe_dir, Sandboxed({}, probe_dir));
  if (devices.devices <= 0 && !bwrap_.empty()) {
    // Tell a sandbox that hides the GPU apart from a machine without one.
    const CudaDeviceReport outside = ProbeCudaDevices(runner_, *options_.executor, probe_dir);
    if (outside.devices > 0) {
      return Fail(Error::Unsupported(context + ": the GPU works outside the sandbox but not inside it (" +
                                     devices.detail + "); add the paths its driver needs to evaluator.binds, or "
                                     "set evaluator.sandbox to \"none\" to run CUDA kernels unconfined"));
    }
  }
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
  if (auto judged = JudgeReferenceRun(Context(), job, run.result, reference_outputs_); !judged) return judged;
  auto timed_outputs = PrepareTimedOutputs(Context(), MakeJob("outputs", {}, false), MakeJob("time", {}, true),
                                           reference_outputs_, dir / "timed_outputs.bin");
  if (!timed_outputs) return Fail(timed_outputs.error());
  reference_timed_outputs_ = *timed_outputs;
  return {};
}

BuildResult CudaEvaluator::Build(const Candidate& candidate) {
  const std::string identity = candidate.Identity();
  return builds_.Get(identity, [&] { return BuildIn(candidate, work_dir_ / "builds" / identity); });
}

std::filesystem::path CudaEvaluator::NewEvalDir() {
  const auto dir = work_dir_ / "evals" / std::to_string(next_eval_++);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

Measurement CudaEvaluator::Measure(const Candidate& /*candidate*/, const BuildResult& build) {
  return MeasureGuarded(build, options_.measure, [&] { return MeasureBuilt(build); });
}

Measurement CudaEvaluator::MeasureBuilt(const BuildResult& build) {
  if (!build.ok) return Verdict(Outcome::kBuildFailed, FirstErrorLine(build.log), build.log);
  if (!std::filesystem::exists(build.library)) {
    return Verdict(Outcome::kRejected, "evaluator error: " + build.library.string() + " does not exist", "");
  }
  const auto run_job = [this](const Job& job, const std::filesystem::path& in, const std::string& phase) {
    return RunJob(job, in, phase);
  };
  Judged judged = CheckAndTime(Context(), run_job, MakeJob("outputs", {build.library}, false),
                               MakeJob("time", {build.library, reference_build_.library}, true), NewEvalDir(),
                               {reference_outputs_, reference_timed_outputs_}, "CUDA events; ", "L2");
  Measurement& measured = judged.measurement;
  measured.log += SandboxLine() + "\n";
  if (measured.outcome != Outcome::kMeasured) return measured;
  measured.log += judged.runner_log;
  if (measured.speedup > options_.measure.max_speedup) {
    measured.outcome = Outcome::kRejected;
    measured.reason = "flagged for review: speedup " + Number(measured.speedup) + " is above the cap of " +
                      Number(options_.measure.max_speedup) + " (max_speedup; raise it if this kernel is honest)";
  }
  return measured;
}

Job CudaEvaluator::MakeJob(const std::string& mode, std::vector<std::filesystem::path> libraries,
                           bool timed_only) const {
  Job job;
  job.mode = mode;
  job.libraries = std::move(libraries);
  job.seed = options_.measure.seed;
  job.input_sets = options_.measure.input_sets;
  job.shapes = timed_only ? timed_shapes_ : all_shapes_;
  job.min_time_s = options_.measure.min_time_s;
  job.min_samples = options_.measure.min_samples;
  job.buffer_sets = std::min(2, options_.measure.input_sets);
  // The runner flushes at least 2x the device's L2 whatever this says; > 0 turns flushing on.
  if (options_.flush_l2) job.flush_bytes = std::max<std::int64_t>(2 * l2_bytes_, 1);
  job.seccomp = false;  // the CUDA driver needs ioctls: kestrel-cuda-runner installs no filter
  return job;
}

JobRun CudaEvaluator::RunJob(const Job& job, const std::filesystem::path& dir, const std::string& phase) const {
  RunnerProcess process;
  process.name = "kestrel-cuda-runner";
  process.argv = Sandboxed(job.libraries, dir);
  process.argv.push_back(runner_.string());
  process.bubblewrapped = !bwrap_.empty();
  process.timeout_s = options_.measure.run_timeout_s;
  process.cpu_limit_s = options_.measure.run_timeout_s * 2 + kRunnerCpuSlackSeconds;  // the driver runs threads of its own
  // No RLIMIT_AS: the CUDA driver maps the GPU's memory into the address space.
  return RunRunnerJob(*options_.executor, process, job, dir, phase);
}

Status CudaEvaluator::PrepareSandbox() {
  for (std::size_t i = 0; i < options_.binds.size(); ++i) {
    std::error_code error;
    const std::filesystem::path path = options_.binds[i];
    if (!path.is_absolute() || !std::filesystem::exists(path, error)) {
      return Fail(Error::InvalidArgument("evaluator.binds[" + std::to_string(i) + "]: \"" + options_.binds[i] +
                                         "\" is not an absolute path that exists"));
    }
  }
  if (options_.sandbox == "none") return {};
  if (options_.sandbox != "auto") {
    return Fail(Error::InvalidArgument("evaluator.sandbox: expected \"auto\" or \"none\", got \"" +
                                       options_.sandbox + "\""));
  }
  const SandboxReport report = DetectSandbox(work_dir_);
  auto confine = DefaultConfinePath();
  if (!report.bwrap) {
    gap_ = "the CUDA runner would run without bubblewrap: " + report.bwrap_why;
  } else if (!confine) {
    gap_ = "the CUDA runner would run without its seccomp filter: " + confine.error().message();
  } else {
    bwrap_ = report.bwrap_path;
    confine_ = *confine;
  }
  return {};
}

std::vector<std::string> CudaEvaluator::Sandboxed(const std::vector<std::filesystem::path>& libraries,
                                                  const std::filesystem::path& dir) const {
  if (bwrap_.empty()) return {};
  ProgramView view;
  view.read_only = {std::filesystem::absolute(runner_)};
  for (const auto& library : libraries) view.read_only.push_back(std::filesystem::absolute(library));
  view.read_only.insert(view.read_only.end(), options_.binds.begin(), options_.binds.end());
  view.writable = {std::filesystem::absolute(dir)};
  view.devices = NvidiaDevices();
  view.sys = true;  // the driver reads /sys (CUDA_ERROR_OPERATING_SYSTEM without it)
  view.cwd = view.writable[0];
  view.confine = confine_;
  std::vector<std::string> pass = {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"};
  pass.insert(pass.end(), options_.pass_env.begin(), options_.pass_env.end());
  return ProgramSandboxArgs(bwrap_, ProgramEnvironment(pass, view.cwd), view);
}

std::string CudaEvaluator::SandboxLine() const {
  if (options_.sandbox == "none") return "sandbox: NONE (evaluator.sandbox is \"none\": the CUDA runner runs unconfined)";
  if (bwrap_.empty()) return "sandbox: rlimits only (INCOMPLETE: " + gap_ + ")";
  return "sandbox: bwrap+seccomp+rlimits (user, pid, ipc, network namespaces; no capabilities; the runner, the kernels, the "
         "evaluation's folder, /sys and the GPU's nodes only) + seccomp denylist (an allowlist cannot know the "
         "driver's calls); the kernel shares the runner's process";
}

}  // namespace

Result<std::unique_ptr<Evaluator>> MakeCudaEvaluator(const Task& task, const CudaEvaluatorOptions& options) {
  const std::string context = "task " + task.name;
  if (task.language != "cuda") {
    return Fail(Error::InvalidArgument(context + ": the cuda evaluator runs cuda kernels, not " +
                                       (task.language.empty() ? std::string("cpp") : task.language)));
  }
  if (options.measure.input_sets < 1 || options.measure.min_samples < 1 || !(options.measure.min_time_s >= 0) ||
      !(options.build_timeout_s > 0) || !(options.measure.run_timeout_s > 0)) {
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
