// The CPU evaluator's hidden-shape check (evaluators/cpu_hidden_shapes.cc):
// a kernel that special-cases the shapes a task shows passes Measure and
// fails the check, with messages that name no size; an honest kernel passes;
// Evaluate (what `kestrel eval` runs) makes the same check.

#include <doctest.h>

#include <string>

#include "core/hidden_shapes.h"
#include "evaluators/evaluator.h"
#include "scale_task.h"

namespace kestrel {
namespace {

Task RangedScaleTask() {
  Task task = testing::MakeScaleTask();
  task.shape_ranges = {{"n", {1, 200000}}};
  return task;
}

Evaluator& Shared() {
  static std::unique_ptr<Evaluator> evaluator = [] {
    auto made = MakeCpuEvaluator(RangedScaleTask(), testing::FastOptions());
    if (!made) FAIL("MakeCpuEvaluator: " << made.error().message());
    return std::move(*made);
  }();
  return *evaluator;
}

Candidate Cheat() {
  return {testing::ReadFile(testing::SourceDir() / "tests" / "evaluators" / "cheats" / "shown_shapes_only.cpp"), {},
          Shared().Toolchain(), Shared().Flags()};
}

}  // namespace

TEST_SUITE("hidden shapes") {
  TEST_CASE("a kernel right only on the shown shapes is measured, then caught by the check") {
    Evaluator& evaluator = Shared();
    const Candidate cheat = Cheat();
    const BuildResult build = evaluator.Build(cheat);
    REQUIRE(build.ok);
    const Measurement measured = evaluator.Measure(cheat, build);
    REQUIRE_MESSAGE(measured.outcome == Outcome::kMeasured, measured.reason);  // the shown shapes cannot tell

    constexpr std::uint64_t kSeed = 12345;
    const HiddenShapeCheck check = evaluator.CheckHiddenShapes(cheat, build, kSeed);
    CHECK(check.shapes == DrawHiddenShapes(RangedScaleTask(), kSeed));
    REQUIRE(check.failure);
    CHECK(check.failure->outcome == Outcome::kWrong);
    CHECK(check.failure->reason.rfind("hidden shape: ", 0) == 0);
    CHECK(check.failure->reason.find("hidden shape 1") != std::string::npos);
    CHECK(check.failure->reason.find("y[") == std::string::npos);  // no element index either
    // Nothing a fix prompt may quote names a drawn size.
    for (const Shape& shape : check.shapes) {
      const std::string size = std::to_string(shape.at("n"));
      CAPTURE(size);
      CHECK(check.failure->reason.find("n=" + size) == std::string::npos);
      CHECK(check.failure->log.find("n=" + size) == std::string::npos);
      CHECK(check.failure->log.find(size + " elements") == std::string::npos);
    }

    // Evaluate: the same verdict, with the timings it had on the shown shapes.
    const Measurement evaluated = evaluator.Evaluate(cheat);
    CHECK(evaluated.outcome == Outcome::kWrong);
    CHECK(evaluated.reason.rfind("hidden shape: ", 0) == 0);
    CHECK(evaluated.shapes.size() == 1);
    CHECK(evaluated.log.find("measured on the task's own shapes") != std::string::npos);
  }

  TEST_CASE("an honest kernel passes its hidden shapes, whatever they are") {
    Evaluator& evaluator = Shared();
    const Candidate honest = testing::MakeCandidate(evaluator, "scale_ref");
    const BuildResult build = evaluator.Build(honest);
    REQUIRE(build.ok);
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      const HiddenShapeCheck check = evaluator.CheckHiddenShapes(honest, build, seed);
      CHECK(check.shapes.size() == static_cast<std::size_t>(kHiddenShapeCount));
      CHECK_FALSE(check.failure);
    }
    const Measurement evaluated = evaluator.Evaluate(honest);
    CHECK_MESSAGE(evaluated.outcome == Outcome::kMeasured, evaluated.reason);
  }

  TEST_CASE("a task without ranges checks nothing") {
    auto made = MakeCpuEvaluator(testing::MakeScaleTask(), testing::FastOptions());
    REQUIRE(made);
    const Candidate cheat{Cheat().source, {}, (*made)->Toolchain(), (*made)->Flags()};
    const HiddenShapeCheck check = (*made)->CheckHiddenShapes(cheat, (*made)->Build(cheat), 1);
    CHECK(check.shapes.empty());
    CHECK_FALSE(check.failure);
    CHECK((*made)->Evaluate(cheat).outcome == Outcome::kMeasured);  // what hidden shapes exist for
  }
}

}  // namespace kestrel
