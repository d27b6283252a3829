// A task whose only data argument is an inout (in place), and a kernel that
// answers from a memo of the inout's contents: the supervisor restores
// inouts before every timed call, so without fresh elements every round
// the memo would be right and fast. It must end wrong, or be measured at
// its honest speed.

#include <doctest.h>

#include "evaluators/evaluator.h"
#include "scale_task.h"

namespace kestrel {
namespace {

Task MakeInPlaceTask() {
  Task task;
  task.name = "scale_inplace";
  task.description = "y = f(y) in place";
  task.language = "cpp";
  task.entry = "scale_inplace";
  ArgSpec y{"y", ArgRole::kInOut, ScalarType::kF32, {"n"}, {}, 0.0};
  ArgSpec n{"n", ArgRole::kDim, ScalarType::kI64, {}, {}, 0.0};
  ArgSpec a{"a", ArgRole::kScalar, ScalarType::kF32, {}, {}, 0.97};
  task.args = {y, n, a};
  task.shapes = {{{"n", 200000}}};
  task.check_shapes = {{{"n", 7}}};
  task.tolerance = {1e-5, 1e-6};
  task.reference = {"inplace_ref.cpp", testing::KernelSource("inplace_ref")};
  return task;
}

TEST_CASE("a memo of an inout's contents is wrong or measured at its honest speed") {
  auto made = MakeCpuEvaluator(MakeInPlaceTask(), testing::FastOptions());
  REQUIRE_MESSAGE(made, testing::ErrorOf(made));
  Evaluator& evaluator = **made;
  const auto eval = [&](const std::string& name) {
    return evaluator.Evaluate(Candidate{testing::KernelSource(name), {}, evaluator.Toolchain(), evaluator.Flags()});
  };
  const Measurement honest = eval("inplace_ref");
  INFO("honest: " << ToString(honest.outcome) << " " << honest.speedup << "\n" << honest.log);
  REQUIRE(honest.outcome == Outcome::kMeasured);
  const Measurement memo = eval("inplace_memo");
  INFO("memo: " << ToString(memo.outcome) << ": " << memo.reason << " " << memo.speedup << "\n" << memo.log);
  CHECK((memo.outcome == Outcome::kWrong || (memo.outcome == Outcome::kMeasured && memo.speedup <= 1.5 * honest.speedup)));
  if (memo.outcome == Outcome::kWrong) CHECK(memo.reason.find("outputs produced while timing differ") != std::string::npos);
}

}  // namespace
}  // namespace kestrel
