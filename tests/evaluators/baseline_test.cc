// The expert baseline (EVALUATION.md, "Metrics reported"): a task's
// baseline.cpp is built with its libraries (OpenBLAS for GEMM), checked like
// a candidate and timed against the reference once, when the evaluator is
// made; every measured result then carries that ratio. A baseline that does
// not link, or is wrong, makes the task a bad task.

#include "evaluators/evaluator.h"

#include <doctest.h>

#include "scale_task.h"

namespace kestrel {
namespace {

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

Measurement EvaluateReference(Evaluator& evaluator, const Task& task) {
  const Measurement m = evaluator.Evaluate(Candidate{task.reference.text, {}, evaluator.Toolchain(), evaluator.Flags()});
  INFO(ToString(m.outcome) << ": " << m.reason << "\n" << m.log);
  REQUIRE(m.outcome == Outcome::kMeasured);
  return m;
}

TEST_SUITE("baseline") {
  TEST_CASE("the built-in matmul's OpenBLAS baseline links, is checked, and is timed against the reference") {
    auto task = FindTask("matmul", {testing::TasksDir()});
    REQUIRE_MESSAGE(task.has_value(), testing::ErrorOf(task));
    REQUIRE(task->baseline_libs == std::vector<std::string>{"openblas"});
    auto evaluator = MakeCpuEvaluator(*task, testing::FastOptions());
    REQUIRE_MESSAGE(evaluator.has_value(), testing::ErrorOf(evaluator));

    const Measurement first = EvaluateReference(**evaluator, *task);
    // A blocked, vectorized sgemm against a triple loop that accumulates in
    // double: far faster on any x86-64.
    CHECK(first.baseline_speedup > 2.0);
    CHECK(Contains(first.log, "speedup over the baseline baseline.cpp"));
    // The reference is ~1x itself, so it is about 1/baseline over the baseline.
    CHECK(SpeedupOverBaseline(first.speedup, first.baseline_speedup) < 0.5);
    MESSAGE("OpenBLAS sgemm over the reference: " << first.baseline_speedup << "x");

    // Timed once per evaluator: every result is divided by the same figure.
    const Measurement second = EvaluateReference(**evaluator, *task);
    CHECK(second.baseline_speedup == first.baseline_speedup);
  }

  TEST_CASE("the speedup cap flags for review, and a baseline lifts it to twice its own speedup") {
    CpuEvaluatorOptions options = testing::FastOptions();
    options.measure.max_speedup = 0.5;  // below the reference itself
    SUBCASE("no baseline: flagged, with the timings kept for review") {
      auto evaluator = MakeCpuEvaluator(testing::MakeScaleTask(), options);
      REQUIRE(evaluator.has_value());
      const Measurement m = (*evaluator)->Evaluate(testing::MakeCandidate(**evaluator, "scale_ref"));
      CHECK(m.outcome == Outcome::kRejected);
      CHECK_MESSAGE(Contains(m.reason, "flagged for review: speedup"), m.reason);
      CHECK_MESSAGE(Contains(m.reason, "(evaluator.max_speedup; raise it if this kernel is honest)"), m.reason);
      CHECK(m.shapes.size() == 1);
      CHECK(m.speedup > 0.5);
    }
    SUBCASE("matmul: OpenBLAS is tens of times the reference, so the cap is twice that") {
      auto task = FindTask("matmul", {testing::TasksDir()});
      REQUIRE(task.has_value());
      auto evaluator = MakeCpuEvaluator(*task, options);
      REQUIRE_MESSAGE(evaluator.has_value(), testing::ErrorOf(evaluator));
      const Measurement m = EvaluateReference(**evaluator, *task);
      CHECK(m.outcome == Outcome::kMeasured);
    }
  }

  TEST_CASE("a task without a baseline reports none") {
    auto evaluator = MakeCpuEvaluator(testing::MakeScaleTask(), testing::FastOptions());
    REQUIRE(evaluator.has_value());
    const Measurement m = EvaluateReference(**evaluator, testing::MakeScaleTask());
    CHECK(m.baseline_speedup == 0.0);
    CHECK(SpeedupOverBaseline(m.speedup, m.baseline_speedup) == 0.0);
    CHECK_FALSE(Contains(m.log, "baseline"));
  }

  TEST_CASE("a wrong baseline is a bad task") {
    Task task = testing::MakeScaleTask();
    task.baseline = SourceFile{"baseline.cpp", testing::KernelSource("scale_wrong")};
    auto refused = MakeCpuEvaluator(task, testing::FastOptions());
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().IsInvalidArgument());
    CHECK_MESSAGE(Contains(refused.error().message(), "the baseline baseline.cpp fails its evaluation: wrong"), refused.error().message());
  }

  TEST_CASE("a baseline whose library is missing is a bad task that says so") {
    Task task = testing::MakeScaleTask();
    task.baseline = SourceFile{"baseline.cpp", task.reference.text};
    task.baseline_libs = {"kestrel_no_such_library"};
    auto refused = MakeCpuEvaluator(task, testing::FastOptions());
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().IsInvalidArgument());
    const std::string message = refused.error().message();
    CHECK_MESSAGE(Contains(message, "the baseline baseline.cpp does not compile or link (with -lkestrel_no_such_library; "
                                    "is the library installed?)"),
                  message);
    CHECK_MESSAGE(Contains(message, "kestrel_no_such_library"), message);
  }

  TEST_CASE("a baseline may JIT (writable and executable memory, as oneDNN does); a candidate with the same code may not") {
    const std::string jit = testing::ReadFile(testing::SourceDir() / "tests" / "evaluators" / "adversarial" / "x_wx_jit.cpp");
    Task task = testing::MakeScaleTask();
    task.baseline = SourceFile{"baseline.cpp", jit};
    auto evaluator = MakeCpuEvaluator(task, testing::FastOptions());
    REQUIRE_MESSAGE(evaluator.has_value(), testing::ErrorOf(evaluator));
    if ((*evaluator)->SandboxGap().find("seccomp") != std::string::npos) return;  // nothing to refuse it here
    const Measurement m = (*evaluator)->Evaluate(Candidate{jit, {}, (*evaluator)->Toolchain(), (*evaluator)->Flags()});
    CHECK(m.outcome == Outcome::kRejected);
    CHECK_MESSAGE(Contains(m.reason, "writable and executable"), m.reason);
  }

  TEST_CASE("the built-in softmax's oneDNN baseline links, runs on its JIT in the sandbox, and beats the reference") {
    auto task = FindTask("softmax", {testing::TasksDir()});
    REQUIRE_MESSAGE(task.has_value(), testing::ErrorOf(task));
    REQUIRE(task->baseline_libs == std::vector<std::string>{"dnnl", "gomp"});
    auto evaluator = MakeCpuEvaluator(*task, testing::FastOptions());
    REQUIRE_MESSAGE(evaluator.has_value(), testing::ErrorOf(evaluator));
    const Measurement m = EvaluateReference(**evaluator, *task);
    CHECK(m.baseline_speedup > 2.0);
    MESSAGE("oneDNN softmax over the reference: " << m.baseline_speedup << "x");
  }

  TEST_CASE("timed as the demo times it, oneDNN's softmax is measured, not taken for a kernel still running") {
    // With the demo's min_time, a sample of the fast baseline holds more
    // calls than there are input sets, so its worker touches the pages of
    // further slots between samples (kTouch): that CPU time is the
    // worker's own, and once counted as idle time it had the baseline
    // rejected as "kept running after its calls returned".
    auto task = FindTask("softmax", {testing::TasksDir()});
    REQUIRE_MESSAGE(task.has_value(), testing::ErrorOf(task));
    CpuEvaluatorOptions options = testing::FastOptions();
    options.measure.min_time_s = 0.2;
    options.measure.min_samples = 10;
    auto evaluator = MakeCpuEvaluator(*task, options);
    REQUIRE_MESSAGE(evaluator.has_value(), testing::ErrorOf(evaluator));
    const Measurement m = EvaluateReference(**evaluator, *task);
    CHECK(m.baseline_speedup > 2.0);
  }

  TEST_CASE("a baseline that crashes is a bad task") {
    Task task = testing::MakeScaleTask();
    task.baseline = SourceFile{"baseline.cpp", testing::KernelSource("scale_segfault")};
    auto refused = MakeCpuEvaluator(task, testing::FastOptions());
    REQUIRE_FALSE(refused.has_value());
    CHECK_MESSAGE(Contains(refused.error().message(), "the baseline baseline.cpp fails its evaluation: crashed"), refused.error().message());
  }
}

}  // namespace
}  // namespace kestrel
