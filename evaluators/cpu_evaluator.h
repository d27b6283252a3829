#pragma once
// CpuEvaluator: the Evaluator for kernels that run on this machine's CPU
// (private to evaluators/; the engine uses MakeCpuEvaluator).
//
// Layout of the work dir:
//   builds/<identity>/kernel.cpp, shim.cpp, kernel.so   one per candidate
//   reference/                                         the reference's build,
//                                                      outputs.bin (its outputs),
//                                                      timed_outputs.bin (those of
//                                                      the timing buffer sets)
//   evals/<n>/                                         one per Measure: jobs and
//                                                      the candidate's outputs
//
// Build is thread-safe and content-addressed (the same candidate is compiled
// once; a second Build returns the first result). Measure runs the
// candidate's runner twice (outputs, then time) and never throws. The runner
// runs under the protections DetectSandbox() finds usable (sandbox.h); the
// log of every Measurement of a built candidate ends with their summary line.
// After timing, the candidate's outputs of its timing buffers are compared
// with the reference's: a difference is `wrong`, "outputs produced while
// timing differ" (skipped for tasks with inout arguments, whose values
// change call after call).
//
// A task with an expert baseline (baseline.cpp, e.g. a cblas_sgemm call) has
// it built under baseline/, checked and timed against the reference once, at
// creation; every measured result carries that ratio (baseline_speedup), so
// its speedup over the baseline is a division of two ratios taken against
// the same reference on the same host.

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "evaluators/build_cache.h"
#include "evaluators/compiler.h"
#include "evaluators/evaluator.h"
#include "evaluators/job.h"
#include "evaluators/judge.h"
#include "evaluators/runner_job.h"
#include "evaluators/runner_pool.h"
#include "evaluators/sandbox.h"

namespace kestrel {

class CpuEvaluator final : public Evaluator {
 public:
  // Builds and runs the reference; see MakeCpuEvaluator.
  static Result<std::unique_ptr<CpuEvaluator>> Create(const Task& task, const CpuEvaluatorOptions& options);
  ~CpuEvaluator() override;  // removes the work dir when it made it

  BuildResult Build(const Candidate& candidate) override;
  Measurement Measure(const Candidate& candidate, const BuildResult& build) override;
  std::string Toolchain() const override { return toolchain_; }
  std::vector<std::string> Flags() const override { return options_.flags; }
  const HostInfo& Host() const override { return host_; }
  bool CanCalibrate() const override { return true; }
  double BaselineSpeedup() const override { return baseline_speedup_; }
  Result<Calibration> Calibrate() override;
  std::string SandboxGap() const override { return sandbox_.Complete() || sandbox_.unconfined ? "" : sandbox_.Summary(); }
  bool Unconfined() const override { return sandbox_.unconfined; }
  void SetCalibration(const Calibration& calibration) override;
  // cpu_profile.cc
  bool CanProfile() const override { return true; }
  Result<Profile> ProfileBuilt(const Candidate& candidate, const BuildResult& build,
                               const Measurement& measurement) override;
  // The profile sources of a built candidate besides its measurement
  // (cpu_profile_sources.cc, docs/PROFILES.md): its instruction mix
  // (objdump), the compiler's vectorization remarks (a second compilation
  // to an object), hardware counters when the PMU is readable (on the
  // largest timed shape, calls enough for about 50 ms by the measurement's
  // time per call, 10 without one), else cachegrind's simulated counts of
  // the smallest timed shape cut down (core/simulated_shape.h); each source
  // timed into profile.costs. What
  // this machine lacks is added to profile.unavailable. Never throws.
  void AddProfileSources(const Candidate& candidate, const BuildResult& build, Profile& profile,
                         const Measurement* measurement = nullptr);
  // cpu_profile_sources.cc: `events` (event_counters.h) counted by the
  // runner on the candidate's worker around each of `calls` calls on timed
  // shape `shape` (its first input set), in the sandbox and limits of its
  // measurement (Job::count_events). The profile counts the PMU's events;
  // the tests count software events, which every Linux has. An error when
  // the job fails or the events cannot be counted (why).
  Result<std::vector<EventCount>> CountEvents(const BuildResult& build, const std::vector<std::string>& events,
                                              int shape, int calls);
  // cpu_hidden_shapes.cc: the reference and then the candidate in outputs
  // jobs on the drawn shapes (one input set of the check's own seed), the
  // candidate's outputs judged like any check.
  HiddenShapeCheck CheckHiddenShapes(const Candidate& candidate, const BuildResult& build,
                                     std::uint64_t seed) override;

 private:
  // The position of a timed shape on the roofline; nullopt when the task
  // has no flops or bytes formula.
  std::optional<RooflinePosition> RooflineOf(const ShapeTiming& timing) const;

  CpuEvaluator(const Task& task, const CpuEvaluatorOptions& options);
  Status Prepare();
  BuildResult BuildIn(const Candidate& candidate, const std::filesystem::path& dir,
                      const std::vector<std::string>& libs = {}) const;
  // The compiler invocation of a candidate built in `dir` (kernel.so from shim.cpp).
  CompileRequest CompileRequestFor(const Candidate& candidate, const std::filesystem::path& dir,
                                   const std::vector<std::string>& libs = {}) const;
  // Cachegrind's counts of the candidate's call on the smallest timed
  // shape cut down (core/simulated_shape.h), in a runner job under the same sandbox and limits as its
  // measurement (its worker without the seccomp allowlist: docs/PROFILES.md).
  Result<CounterProfile> SimulateCaches(const BuildResult& build, const std::string& valgrind);
  // A profile's outputs job of the candidate on `shape`: one input set,
  // called once (Job::second_call off), inputs drawn in memory.
  Job ProfileJob(const BuildResult& build, const JobShape& shape) const;
  // The PMU's counts (PmuEvents) of the candidate on the largest timed shape.
  Result<CounterProfile> CountHardware(const BuildResult& build, const Measurement* measurement);
  // Correctness then timing against the reference; `judge` false skips the
  // plausibility check (the task's own baseline is trusted code).
  Measurement MeasureBuilt(const BuildResult& build, bool judge = true, bool jit = false);
  // Builds the task's expert baseline (with its libraries), checks it like a
  // candidate and times it against the reference once: baseline_speedup_.
  // A baseline that does not build or is not measured is a bad task.
  Status PrepareBaseline();
  JudgeContext Context() const { return {&task_, &all_shapes_, &timed_shapes_, options_.measure.input_sets}; }
  // Fills the roofline fractions of a measured result and rejects it when it
  // is implausible (faster than the roofline allows, or above the speedup cap).
  // The first time a result would be rejected by the roofline, the host is
  // calibrated again (a calibration taken on a busy machine is low) and the
  // larger figures of the two are kept, so that only a result faster than
  // both calibrations is rejected.
  Measurement CheckPlausible(Measurement measured);
  // Roofline fractions of every shape with the current calibration; the index
  // of the first shape above kImplausibleFraction, or -1. A shape whose
  // reference, too, ran above it (the task's flops or bytes formula
  // overstates the work) gets no fraction and is listed in `unusable`.
  int FillRooflineFractions(Measurement& measured, std::vector<int>* unusable) const;
  Job MakeJob(const std::string& mode, std::vector<std::filesystem::path> libraries, bool timed_only) const;
  // The runner's command line (sandboxed in `dir`), environment and limits.
  RunnerProcess Process(const std::filesystem::path& dir) const;
  // One run of the runner: by a supervisor pool_ keeps, else by one of its
  // own on options_.executor (runner_job.h). `kept`: false for a job unlike
  // the run's evaluations (a profile's), which would make a kept
  // supervisor drop what it keeps for them.
  JobRun RunJob(const Job& job, const std::filesystem::path& dir, const std::string& phase, bool kept = true) const;
  std::filesystem::path NewEvalDir();
  // The run's prepared inputs (job.h): every shape's input sets, drawn once
  // by the reference's job. Made again (under a new name, then renamed
  // over) when the file is missing or has the wrong size, so that a run
  // never loses an evaluation to a deleted or truncated file. The
  // reference's outputs job, run when the file is made.
  Status EnsurePreparedInputs();
  JobRun RunReferenceOutputs(const std::filesystem::path& outputs, bool prepare_inputs);

  Task task_;
  CpuEvaluatorOptions options_;
  std::filesystem::path work_dir_;
  bool owns_work_dir_ = false;
  std::filesystem::path runner_;
  std::filesystem::path worker_;
  std::string toolchain_;
  // The compiler writes each build's vectorization remarks beside it
  // (kRemarksFile), so a profile reads them instead of compiling again.
  bool build_remarks_ = false;
  static constexpr const char* kRemarksFile = "remarks.txt";
  HostInfo host_;
  mutable std::mutex calibration_mutex_;
  Calibration calibration_;        // none until SetCalibration; guarded by calibration_mutex_
  bool recalibrated_ = false;      // guarded by calibration_mutex_
  std::vector<JobShape> all_shapes_;    // timed then check shapes
  std::vector<JobShape> timed_shapes_;
  BuildResult reference_build_;
  double baseline_speedup_ = 0.0;  // the baseline over the reference; 0: the task has none
  std::filesystem::path reference_outputs_;
  std::filesystem::path reference_timed_outputs_;  // empty: no re-check of timed outputs
  std::filesystem::path inputs_file_;              // the prepared inputs
  std::uint64_t inputs_bytes_ = 0;                 // their size, header included
  std::uint64_t inputs_hash_ = 0;                  // their layout's hash (job.h, PrepareLayout)
  std::mutex inputs_mutex_;                        // held while they are checked or made
  SandboxReport sandbox_;

  BuildCache builds_;  // by identity, under work_dir_/builds/
  // Supervisors kept for the run (runner_pool.h); null where the runner's
  // jobs do not run here (a Slurm executor).
  std::unique_ptr<RunnerPool> pool_;
  std::atomic<int> next_eval_{0};
};

// Where kestrel-runner is when options.runner_path is empty: next to
// /proc/self/exe, else $KESTREL_RUNNER, else the build tree's.
Result<std::filesystem::path> DefaultRunnerPath();
// Where kestrel-worker is when options.worker_path is empty: the same way.
Result<std::filesystem::path> DefaultWorkerPath();
// kestrel-confine (the seccomp denylist of programs that load a kernel
// themselves: sandbox_args.h), found as DefaultWorkerPath is ($KESTREL_CONFINE).
Result<std::filesystem::path> DefaultConfinePath();

}  // namespace kestrel
