// budget.roofline (issue 18): a run stops with reason `roofline` once a
// confirmed best's profile reaches that fraction of the roofline, and not
// before. The fake evaluator profiles every node with one canned profile.

#include <doctest.h>

#include "search/engine_harness.h"

namespace kestrel {
namespace {

using testing::FakeEvaluator;
using testing::Harness;
using testing::Must;

Profile AtFraction(double fraction) {
  Profile profile;
  RooflinePosition roofline;
  roofline.shape = "n=1000";
  roofline.bound = "memory";
  roofline.fraction = fraction;
  profile.roofline = roofline;
  return profile;
}

RunConfig KnobRun(double roofline) {
  RunConfig config = testing::Config();
  config.parallel.max_in_flight = 1;
  config.budget.evaluations = 8;
  config.budget.roofline = roofline;
  return config;
}

TEST_CASE("a best at the roofline budget's fraction stops the run with reason roofline") {
  Harness harness;
  FakeEvaluator evaluator;
  evaluator.SetProfile(AtFraction(0.93));
  const RunSummary summary = Must(harness.Run(evaluator, KnobRun(0.9)));
  CHECK(summary.stop_reason == StopKind::kRoofline);
  CHECK(summary.evaluations == 1);  // the seed, the first best, is already there
  CHECK(harness.LastRun().stop_reason == "roofline");
}

TEST_CASE("a best below the roofline budget's fraction does not stop the run") {
  Harness harness;
  FakeEvaluator evaluator;
  evaluator.SetProfile(AtFraction(0.5));
  const RunSummary summary = Must(harness.Run(evaluator, KnobRun(0.9)));
  CHECK(summary.stop_reason == StopKind::kEvaluations);
  CHECK(summary.evaluations == 8);
}

}  // namespace
}  // namespace kestrel
