#pragma once
// An in-process Evaluator for the engine tests: no compiler, no subprocess.
// Build succeeds unless the outcome function says build_failed; Measure
// returns a speedup that is a deterministic function of the knob values (or
// the outcome the function names). It counts what it was asked to do, so a
// test can tell that no identity was evaluated twice and that the engine kept
// its concurrency limits.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/stop.h"
#include "evaluators/evaluator.h"

namespace kestrel::testing {

using OutcomeFunction = std::function<Outcome(const KnobValues&)>;
using SpeedupFunction = std::function<double(const KnobValues&)>;
// The code a build would be (BuildResult::code_hash); none: "" (unknown).
using CodeHashFunction = std::function<std::string(const KnobValues&)>;

inline int KnobInt(const KnobValues& knobs, const std::string& name) { return std::stoi(knobs.at(name)); }

// For the seed of MakeFakeTask: A in 1..4, B in 1..3, C in 0..1. The unique
// optimum is A=4 B=2 C=1.
inline double FakeSpeedup(const KnobValues& knobs) {
  const int a = KnobInt(knobs, "A"), b = KnobInt(knobs, "B"), c = KnobInt(knobs, "C");
  return 1.0 + 0.1 * a + (b == 2 ? 0.08 : b == 1 ? 0.04 : 0.0) + 0.013 * c;
}

class FakeEvaluator final : public Evaluator {
 public:
  explicit FakeEvaluator(SpeedupFunction speedup = FakeSpeedup,
                         OutcomeFunction outcome = [](const KnobValues&) { return Outcome::kMeasured; },
                         std::chrono::milliseconds measure_sleep = std::chrono::milliseconds(0))
      : speedup_(std::move(speedup)), outcome_(std::move(outcome)), measure_sleep_(measure_sleep) {
    host_.name = "fake-host";
    host_.cpu_model = "Fake CPU";
    host_.cores = 1;
  }

  BuildResult Build(const Candidate& candidate) override {
    if (withdraw_at_stop_ && StopRequested()) {
      BuildResult withdrawn;
      withdrawn.withdrawn = true;
      withdrawn.log = "Slurm job 8 was still queued when the run was stopped; it was cancelled\n";
      return withdrawn;
    }
    Enter(builds_active_, max_builds_active_);
    BuildResult result;
    result.ok = outcome_(candidate.knobs) != Outcome::kBuildFailed;
    result.log = result.ok ? "" : "fake.cpp:1: error: the fake compiler refuses " + ToString(candidate.knobs);
    result.seconds = 0.001;
    if (result.ok) result.library = "/nonexistent/fake.so";
    if (result.ok && code_hash_) result.code_hash = code_hash_(candidate.knobs);
    {
      std::lock_guard lock(mutex_);
      ++builds_[candidate.Identity()];
    }
    --builds_active_;
    return result;
  }

  Measurement Measure(const Candidate& candidate, const BuildResult& build) override {
    Measurement measurement;
    measurement.build_seconds = build.seconds;
    measurement.input_sets = 1;
    if (!build.ok) {
      measurement.outcome = Outcome::kBuildFailed;
      measurement.reason = "the fake compiler failed";
      measurement.log = build.log;
      Count(candidate);
      return measurement;
    }
    if (withdraw_at_stop_ && StopRequested()) {
      // As a cluster's executor withdraws a job still queued at a stop.
      measurement.withdrawn = true;
      measurement.reason = "Slurm job 9 was still queued when the run was stopped; it was cancelled";
      return measurement;
    }
    Enter(measures_active_, max_measures_active_);
    if (measure_sleep_.count() > 0) std::this_thread::sleep_for(measure_sleep_);
    measurement.outcome = outcome_(candidate.knobs);
    switch (measurement.outcome) {
      case Outcome::kMeasured: {
        measurement.speedup = source_speedup_ && candidate.knobs.empty() ? source_speedup_(candidate.source)
                                                                         : speedup_(candidate.knobs);
        ShapeTiming timing;
        timing.shape = {{"n", 1000}};
        timing.reference_seconds = {1e-3, 1.1e-3, 0.9e-3};
        for (double seconds : timing.reference_seconds) timing.candidate_seconds.push_back(seconds / measurement.speedup);
        timing.candidate = Summarize(timing.candidate_seconds);
        timing.reference = Summarize(timing.reference_seconds);
        timing.speedup = measurement.speedup;
        measurement.shapes.push_back(timing);
        break;
      }
      case Outcome::kWrong:
        measurement.reason = "1 of 1 input sets differ";
        measurement.mismatches.push_back({0, 0, "y", 3, 1.0, 2.0});
        break;
      case Outcome::kCrashed: measurement.reason = "killed by SIGSEGV"; break;
      case Outcome::kTimedOut: measurement.reason = "ran past 1s"; break;
      default: measurement.reason = "rejected by the fake"; break;
    }
    measurement.eval_seconds = measure_sleep_.count() / 1000.0;
    --measures_active_;
    Count(candidate);
    return measurement;
  }

  // Profiles only after EnableProfiles: a canned profile whose roofline
  // fraction is speedup / 10, memory-bound; counted per identity. Profiling
  // counts as a use of the device (MaxConcurrentDeviceUses).
  bool CanProfile() const override { return profiles_enabled_; }
  Result<Profile> ProfileBuilt(const Candidate& candidate, const BuildResult& build,
                               const Measurement& measurement) override {
    if (!profiles_enabled_) return Evaluator::ProfileBuilt(candidate, build, measurement);
    Enter(measures_active_, max_measures_active_);
    if (measure_sleep_.count() > 0) std::this_thread::sleep_for(measure_sleep_);
    Profile profile;
    RooflinePosition roofline;
    roofline.shape = "n=1000";
    roofline.fraction = measurement.speedup / 10;
    roofline.bound = "memory";
    roofline.level = "L1";
    roofline.peak_gflops = 100;  // a calibrated host
    roofline.bandwidth_gbps = 50;
    profile.roofline = roofline;
    profile.unavailable.push_back("pmu: the fake has none");
    {
      std::lock_guard lock(mutex_);
      ++profiled_[candidate.Identity()];
    }
    --measures_active_;
    return profile;
  }
  void EnableProfiles() { profiles_enabled_ = true; }
  // Build and Measure withdraw (BuildResult::withdrawn,
  // Measurement::withdrawn) once a stop is requested.
  void WithdrawAtStop() { withdraw_at_stop_ = true; }
  // A candidate without knobs (an LLM's rewrite) is judged by its source.
  void JudgeSourcesWith(std::function<double(const std::string&)> speedup) { source_speedup_ = std::move(speedup); }

  // Hidden shapes: after FailHiddenShapes(f), a check draws one shape
  // {n: 77} and fails the candidates f names (`wrong`, "hidden shape: ...");
  // every check is counted per identity, with the seed it was given.
  HiddenShapeCheck CheckHiddenShapes(const Candidate& candidate, const BuildResult& build,
                                     std::uint64_t seed) override {
    (void)build;
    if (!hidden_failure_) return {};
    {
      std::lock_guard lock(mutex_);
      hidden_checks_[candidate.Identity()].push_back(seed);
    }
    HiddenShapeCheck check;
    check.shapes = {{{"n", 77}}};
    if (hidden_failure_(candidate.knobs)) {
      check.failure = Measurement{};
      check.failure->outcome = Outcome::kWrong;
      check.failure->reason = "hidden shape: 1 of 1 input sets differ (hidden shape 1, input set 0)";
    }
    return check;
  }
  void FailHiddenShapes(std::function<bool(const KnobValues&)> fails) { hidden_failure_ = std::move(fails); }
  std::map<std::string, std::vector<std::uint64_t>> HiddenChecksByIdentity() const {
    std::lock_guard lock(mutex_);
    return hidden_checks_;
  }
  std::map<std::string, int> ProfilesByIdentity() const {
    std::lock_guard lock(mutex_);
    return profiled_;
  }

  std::string Toolchain() const override { return "fake-cc 1.0"; }
  std::vector<std::string> Flags() const override { return {"-O2"}; }
  const HostInfo& Host() const override { return host_; }

  // Evaluations (Measure calls) so far, and per identity.
  int Evaluations() const { return evaluations_.load(); }
  std::map<std::string, int> EvaluationsByIdentity() const {
    std::lock_guard lock(mutex_);
    return evaluated_;
  }
  // From now on builds carry this code hash (as the CPU evaluator's do).
  void SetCodeHash(CodeHashFunction code_hash) { code_hash_ = std::move(code_hash); }
  int MaxConcurrentMeasures() const { return max_measures_active_.load(); }
  int MaxConcurrentBuilds() const { return max_builds_active_.load(); }
  // The candidate the fake would see for these knobs of `source`.
  Candidate CandidateFor(const std::string& source, const KnobValues& knobs) const {
    return Candidate{source, knobs, Toolchain(), Flags()};
  }

 private:
  static void Enter(std::atomic<int>& active, std::atomic<int>& max_active) {
    const int now = ++active;
    int seen = max_active.load();
    while (now > seen && !max_active.compare_exchange_weak(seen, now)) {
    }
  }
  void Count(const Candidate& candidate) {
    {
      std::lock_guard lock(mutex_);
      ++evaluated_[candidate.Identity()];
    }
    ++evaluations_;
  }

  SpeedupFunction speedup_;
  std::function<double(const std::string&)> source_speedup_;
  OutcomeFunction outcome_;
  std::function<bool(const KnobValues&)> hidden_failure_;
  std::map<std::string, std::vector<std::uint64_t>> hidden_checks_;
  bool profiles_enabled_ = false;
  bool withdraw_at_stop_ = false;
  std::map<std::string, int> profiled_;
  CodeHashFunction code_hash_;
  std::chrono::milliseconds measure_sleep_;
  HostInfo host_;
  mutable std::mutex mutex_;
  std::map<std::string, int> builds_;
  std::map<std::string, int> evaluated_;
  std::atomic<int> evaluations_{0};
  std::atomic<int> builds_active_{0}, max_builds_active_{0};
  std::atomic<int> measures_active_{0}, max_measures_active_{0};
};

// The seed of the fake task: 4 x 3 x 2 = 24 knob configurations.
inline constexpr char kFakeSeed[] =
    "// kestrel:knob A 1 2 3 4\n"
    "// kestrel:knob B 1 2 3\n"
    "// kestrel:knob C 0 1\n"
    "void fake(const float* x, float* y, long n) { for (long i = 0; i < n; ++i) y[i] = x[i]; }\n";

inline Task MakeFakeTask() {
  Task task;
  task.name = "fake_task";
  task.description = "a task the fake evaluator judges";
  task.language = "cpp";
  task.entry = "fake";
  task.shapes = {{{"n", 1000}}};
  task.spec_text = R"({"name": "fake_task", "entry": "fake"})";
  task.reference = {"reference.cpp", "void fake(const float*, float*, long) {}\n"};
  task.seeds = {{"seed.cpp", kFakeSeed}};
  return task;
}

}  // namespace kestrel::testing
