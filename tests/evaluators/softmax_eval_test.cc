// The built-in softmax task, loaded from configs/tasks, with its reference
// evaluated as a candidate: measured at speedup ~1.

#include <doctest.h>

#include "evaluators/evaluator.h"
#include "scale_task.h"

namespace kestrel {
namespace {

TEST_SUITE("cpu_evaluator") {
  TEST_CASE("softmax: the reference evaluated as a candidate") {
    auto task = LoadTask(testing::TasksDir() / "softmax");
    REQUIRE_MESSAGE(task.has_value(), testing::ErrorOf(task));
    CpuEvaluatorOptions options = testing::FastOptions();
    options.flags = {"-O3", "-march=native"};
    options.measure.min_time_s = 0.3;
    options.measure.min_samples = 10;
    options.measure.run_timeout_s = 60;
    auto evaluator = MakeCpuEvaluator(*task, options);
    REQUIRE_MESSAGE(evaluator.has_value(), testing::ErrorOf(evaluator));
    const Candidate candidate{task->reference.text, {}, (*evaluator)->Toolchain(), (*evaluator)->Flags()};
    const Measurement m = (*evaluator)->Evaluate(candidate);
    INFO(ToString(m.outcome) << ": " << m.reason << "\n" << m.log);
    REQUIRE(m.outcome == Outcome::kMeasured);
    REQUIRE(m.shapes.size() == 2);
    CHECK(m.speedup > 0.6);
    CHECK(m.speedup < 1.6);
    CHECK(m.shapes[0].gflops > 0);
    CHECK(m.shapes[0].gbps > 0);
    MESSAGE("softmax reference vs itself: speedup " << m.speedup << ", eval " << m.eval_seconds << " s");
  }
}

}  // namespace
}  // namespace kestrel
