// The cheat gallery: one kernel per way an LLM-written kernel may try to win
// without being right or fast (tests/evaluators/cheats/, plus four of
// tests/evaluators/kernels/). Each must end in its outcome with a reason
// naming what it did, none may ever be `measured`, and the honest kernel
// evaluated beside them must be.

#include <algorithm>
#include <string>
#include <vector>

#include <doctest.h>

#include "evaluators/evaluator.h"
#include "evaluators/sandbox.h"
#include "scale_task.h"

namespace kestrel {
namespace {

struct Cheat {
  const char* file;    // under tests/evaluators/
  Outcome outcome;
  const char* reason;  // a substring of the reason
  bool needs_seccomp;  // caught only by the runner's seccomp filter
};

const std::vector<Cheat>& Gallery() {
  static const std::vector<Cheat> gallery = {
      {"cheats/constant", Outcome::kWrong, "input sets differ", false},
      {"kernels/scale_modifies_input", Outcome::kWrong, "modified its input x", false},
      {"cheats/static_flag", Outcome::kWrong, "non-deterministic", false},
      {"cheats/pointer_cache", Outcome::kWrong, "non-deterministic", false},
      {"cheats/large_shape_only", Outcome::kWrong, "differ on shape n=7", false},
      {"cheats/whole_tolerance", Outcome::kWrong, "relative L2 error", false},
      {"kernels/scale_fake_result", Outcome::kWrong, "two calls on the same inputs differ", false},
      {"cheats/forks", Outcome::kRejected, "sandbox: the kernel tried to start a process", true},
      {"cheats/execs", Outcome::kRejected, "sandbox: the kernel tried to execute a program", true},
      {"cheats/socket", Outcome::kRejected, "sandbox: the kernel tried to open a socket", true},
      {"cheats/writes_outside", Outcome::kRejected, "sandbox: the kernel tried to open a file for writing", true},
      {"kernels/scale_infinite_loop", Outcome::kTimedOut, "timed out after 3s", false},
      {"cheats/huge_allocation", Outcome::kCrashed, "killed by SIG", false},
      {"kernels/scale_abort", Outcome::kCrashed, "killed by SIGABRT", false},
      {"cheats/stack_overflow", Outcome::kCrashed, "killed by SIGSEGV", false},
      // Its last timed call's outputs still hold their poison when the call
      // returned (checked while the worker is frozen, before the re-checks).
      {"cheats/timing_aware", Outcome::kWrong, "was not written when the call returned", false},
      {"cheats/writes_input_when_timed", Outcome::kCrashed, "killed by SIGSEGV while timing", false},
      // Right only on the sizes the task shows: caught by its hidden shapes (the task below has ranges).
      {"cheats/shown_shapes_only", Outcome::kWrong, "hidden shape: ", false},
  };
  return gallery;
}

Evaluator& Shared() {
  static std::unique_ptr<Evaluator> evaluator = [] {
    Task task = testing::MakeScaleTask();
    task.shape_ranges = {{"n", {1, 200000}}};  // hidden shapes, as every built-in task has
    auto made = MakeCpuEvaluator(task, testing::FastOptions());
    if (!made) FAIL("MakeCpuEvaluator: " << made.error().message());
    return std::move(*made);
  }();
  return *evaluator;
}

Measurement Eval(const std::string& file) {
  Evaluator& evaluator = Shared();
  const std::string source = testing::ReadFile(testing::SourceDir() / "tests" / "evaluators" / (file + ".cpp"));
  return evaluator.Evaluate(Candidate{source, {}, evaluator.Toolchain(), evaluator.Flags()});
}

TEST_SUITE("cheat_gallery") {
  TEST_CASE("every cheat ends in its outcome with its reason, never measured") {
    const SandboxReport sandbox = DetectSandbox();
    MESSAGE(sandbox.Summary());
    for (const Cheat& cheat : Gallery()) {
      if (cheat.needs_seccomp && !sandbox.seccomp) {
        MESSAGE("skipped " << cheat.file << ": seccomp is not usable here");
        continue;
      }
      const Measurement m = Eval(cheat.file);
      INFO(cheat.file << ": " << ToString(m.outcome) << ": " << m.reason << "\n" << m.log);
      CHECK(m.outcome != Outcome::kMeasured);
      CHECK(m.outcome == cheat.outcome);
      CHECK(m.reason.find(cheat.reason) != std::string::npos);
      CHECK(m.log.find("sandbox: ") != std::string::npos);  // the active protections, always
    }
    const Measurement honest = Eval("kernels/scale_ref");
    INFO(honest.reason << "\n" << honest.log);
    CHECK(honest.outcome == Outcome::kMeasured);
    CHECK(honest.log.find(sandbox.Summary()) != std::string::npos);
  }
}

TEST_SUITE("sandbox") {
  TEST_CASE("the report says which protections are active") {
    SandboxReport report;
    report.seccomp = true;
    report.bwrap_why = "no user namespaces";
    CHECK(report.Summary() == "sandbox: seccomp+rlimits (INCOMPLETE: bwrap unavailable: no user namespaces)");
    report.bwrap = true;
    CHECK(report.Summary() == "sandbox: bwrap+seccomp+rlimits");
    const SandboxReport here = DetectSandbox();
    CHECK(here.rlimits);
    CHECK((here.bwrap || !here.bwrap_why.empty()));
    CHECK((here.seccomp || !here.seccomp_why.empty()));
  }

  TEST_CASE("doctor's layers say what each protection is, and MISSING where one is not there") {
    SandboxReport report;
    report.bwrap_why = "user namespaces are unavailable";
    report.seccomp = true;
    bool namespaces_missing = false;
    for (const auto& [layer, state] : report.Layers()) {
      if (layer == "namespaces") namespaces_missing = state.rfind("MISSING: user namespaces", 0) == 0;
    }
    CHECK(namespaces_missing);
    CHECK_FALSE(report.Complete());
    report.bwrap = true;
    CHECK(report.Complete());
    for (const auto& [layer, state] : report.Layers()) CHECK(state.find("MISSING") == std::string::npos);
    SandboxReport none = SandboxFor("none");
    CHECK(none.unconfined);
    CHECK(none.Summary().find("NONE") != std::string::npos);
  }
}

}  // namespace
}  // namespace kestrel
