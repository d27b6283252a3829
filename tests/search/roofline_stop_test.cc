// budget.roofline (issue 18): a run stops with reason `roofline` once a
// confirmed best's profile reaches that fraction of the roofline, and not
// before. The fake evaluator's profiles put a node at speedup / 10 of the
// roofline: the seed at 0.114, the fake task's optimum at 0.149.

#include <doctest.h>

#include "search/engine_harness.h"

namespace kestrel {
namespace {

using testing::FakeEvaluator;
using testing::Harness;
using testing::Must;

RunConfig KnobRun(double roofline) {
  RunConfig config = testing::Config();
  config.parallel.max_in_flight = 1;
  config.budget.evaluations = 20;
  config.budget.roofline = roofline;
  return config;
}

TEST_CASE("a best at the roofline budget's fraction stops the run with reason roofline") {
  Harness harness;
  FakeEvaluator evaluator;
  evaluator.EnableProfiles();
  const RunSummary summary = Must(harness.Run(evaluator, KnobRun(0.13)));
  CHECK(summary.stop_reason == StopKind::kRoofline);
  CHECK(summary.best_speedup >= 1.3);
  CHECK(summary.evaluations > 1);
  CHECK(summary.evaluations < 20);
  CHECK(harness.LastRun().stop_reason == "roofline");
  // It stopped at the first best that reached it: no earlier result did.
  int reached = 0;
  for (const NodeRecord& node : harness.Nodes()) reached += node.speedup && *node.speedup >= 1.3;
  CHECK(reached == 1);
}

TEST_CASE("a best below the roofline budget's fraction does not stop the run") {
  Harness harness;
  FakeEvaluator evaluator;
  evaluator.EnableProfiles();
  RunConfig config = KnobRun(0.5);
  config.budget.evaluations = 30;  // more than the 24 configurations
  const RunSummary summary = Must(harness.Run(evaluator, config));
  CHECK(summary.stop_reason == StopKind::kExhausted);
  CHECK(summary.best_speedup == doctest::Approx(1.493));  // the optimum, at 0.149 of the roofline
}

}  // namespace
}  // namespace kestrel
