#pragma once
// Evaluator: builds a candidate and judges it on some hardware
// (EVALUATION.md). A bad candidate is data, an Outcome in a Measurement,
// never an exception or a crash of the engine: the candidate runs in a
// separate process.
//
// Thread-safety: Build may run concurrently for different candidates;
// Measure is called for one candidate at a time per device slot (the engine
// guarantees it), but may run concurrently with Build.

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/candidate.h"
#include "core/error.h"
#include "core/host.h"
#include "core/measurement.h"
#include "core/profile.h"
#include "core/roofline.h"
#include "core/task.h"
#include "evaluators/executor.h"
#include "evaluators/measure_options.h"

namespace kestrel {

// The result of Build: a loadable artifact, or the compiler's verdict.
struct BuildResult {
  bool ok = false;
  std::filesystem::path library;  // the shared object, when ok
  std::string log;                // compiler output (trimmed to the first errors when !ok)
  double seconds = 0.0;
  // The built code's fingerprint (code_fingerprint.h): hex SHA-256, equal
  // for two builds of the same code; "" when unknown (the evaluator cannot
  // tell, or it failed to). Never a reason for a build to fail.
  std::string code_hash;
  // Not a verdict: its job was withdrawn from a cluster's queue at a stop
  // (SubprocessResult::withdrawn); nothing was built, nor is it cached.
  bool withdrawn = false;
};

// A hidden-shape check (core/hidden_shapes.h): the candidate's outputs on
// shapes drawn from the task's shape_ranges, against the reference's on the
// same shapes and fresh inputs.
struct HiddenShapeCheck {
  std::vector<Shape> shapes;           // what was checked; empty: nothing was
  std::optional<Measurement> failure;  // the verdict when it failed: `wrong` ("hidden shape: ..."), or `rejected`
  std::string note;                    // why nothing was checked, when the task has ranges
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // Compiles the candidate (with its knob values) into an artifact.
  virtual BuildResult Build(const Candidate& candidate) = 0;
  // Verifies and times a built candidate. A failed build passed in gives a
  // build_failed Measurement carrying the build log.
  virtual Measurement Measure(const Candidate& candidate, const BuildResult& build) = 0;
  // Build, Measure, and for a measured result CheckHiddenShapes (its seed
  // drawn from the candidate's identity): what `kestrel eval` does, the
  // checks a search makes before it confirms a result.
  Measurement Evaluate(const Candidate& candidate);
  // What goes into a candidate's identity besides source and knobs.
  virtual std::string Toolchain() const = 0;
  virtual std::vector<std::string> Flags() const = 0;
  virtual const HostInfo& Host() const = 0;
  // The task's expert baseline over its reference, as this evaluator timed
  // it when it was made; 0 when the task has none (or the evaluator times none).
  virtual double BaselineSpeedup() const { return 0; }
  // Measures this host's roofline (peak FLOP/s, bandwidths). Default: the
  // evaluator has no way to (NotFound), and CanCalibrate says so up front.
  virtual bool CanCalibrate() const { return false; }
  virtual Result<Calibration> Calibrate() { return Fail(Error::NotFound("this evaluator cannot calibrate its host")); }
  // The roofline later measurements are judged against: each reports its
  // fraction of it, and one faster than kImplausibleFraction of it is
  // rejected as implausible. Without one (the default) fractions are 0.
  // Call before the first Measure.
  virtual void SetCalibration(const Calibration& calibration) { (void)calibration; }
  // Why a kernel would run with less than the whole sandbox (sandbox.h):
  // "" when it has every layer, or when the user chose to run unconfined.
  virtual std::string SandboxGap() const { return ""; }
  // The user chose no sandbox at all (evaluator.sandbox "none").
  virtual bool Unconfined() const { return false; }
  // Profiles a built candidate that was measured (`measurement`, outcome
  // measured): core/profile.h, under the same sandbox and limits as its
  // measurement. Sources this machine lacks are listed in the profile's
  // `unavailable`, not failed. Default: this evaluator cannot (NotFound),
  // and CanProfile says so up front. Called at most once at a time per
  // device slot, like Measure (the engine holds the slot).
  virtual bool CanProfile() const { return false; }
  virtual Result<Profile> ProfileBuilt(const Candidate& candidate, const BuildResult& build,
                                       const Measurement& measurement) {
    (void)candidate, (void)build, (void)measurement;
    return Fail(Error::NotFound("this evaluator cannot profile"));
  }
  // Checks a built candidate on the task's hidden shapes drawn by `seed`
  // (HiddenShapeSeed). The messages name the shapes "hidden shape 1", ...,
  // never their sizes (the failure may reach a fix prompt); the sizes are
  // in the result's `shapes`. Default: nothing checked (the evaluator cannot,
  // e.g. a user's command harness).
  virtual HiddenShapeCheck CheckHiddenShapes(const Candidate& candidate, const BuildResult& build,
                                             std::uint64_t seed) {
    (void)candidate, (void)build, (void)seed;
    return {{}, std::nullopt, "this evaluator cannot check hidden shapes"};
  }
};

// A measured result after its hidden-shape check: unchanged when the check
// passed or checked nothing, else the check's verdict, keeping the timings
// on the task's own shapes (and their log, after the verdict's).
Measurement WithHiddenShapeVerdict(Measurement measured, const HiddenShapeCheck& check);

// What every evaluator's Measure does around its own work: runs `measure`,
// turns an exception into a `rejected` "evaluator error: ..." Measurement
// (Measure never throws), and fills the fields all of them fill: the build's
// and the evaluation's seconds, the input sets and the seed.
Measurement MeasureGuarded(const BuildResult& build, const MeasureOptions& options,
                           const std::function<Measurement()>& measure);

struct CpuEvaluatorOptions {
  std::string compiler = "c++";
  std::vector<std::string> flags = {"-O3", "-march=native"};
  int threads = 1;                // OMP_NUM_THREADS etc. for the runner
  // A task whose expert baseline is faster than half measure.max_speedup
  // lifts the cap to twice the baseline's speedup: the baseline proves such
  // speeds are honest.
  MeasureOptions measure;
  // Before each timing sample the runner writes over a buffer twice the
  // size of the last-level cache (at most 128 MiB), so that each sample
  // starts cold (a batched sample of a microsecond kernel: its first call).
  // Each flush costs about that size over the memory bandwidth.
  bool flush_cache = false;
  // Where a profile's counts come from: "auto" (the PMU where it is
  // readable, else cachegrind), "pmu" (none without one) or "cachegrind".
  std::string profile_counters = "auto";
  double build_timeout_s = 120;   // compiler wall clock
  std::filesystem::path work_dir;     // scratch; default: a fresh dir under the executor's ScratchRoot()
  std::filesystem::path runner_path;  // kestrel-runner; default: next to the executable
  std::filesystem::path worker_path;  // kestrel-worker; default: next to the executable
  // "auto": every layer of the sandbox this machine offers (sandbox.h);
  // "none": no sandbox at all, by the user's explicit choice (every log
  // line of the run says so).
  std::string sandbox = "auto";
  // Where every runner job (the reference's, each candidate's, the
  // baseline's), the host probe and the calibration run (a Slurm executor:
  // docs/SLURM.md; the work dir is then made under its shared folder) ...
  std::shared_ptr<const Executor> executor = LocalExecutor();
  // ... and where the compiler runs.
  std::shared_ptr<const Executor> build_executor = LocalExecutor();
};

// Builds the task's reference, computes its outputs on every shape and input
// set, and returns the evaluator. A reference that does not compile or crash
// is an InvalidArgument error naming the task (a bad task, exit code 2).
Result<std::unique_ptr<Evaluator>> MakeCpuEvaluator(const Task& task, const CpuEvaluatorOptions& options);

}  // namespace kestrel
