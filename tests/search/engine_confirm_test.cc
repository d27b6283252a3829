// Confirmation (EVALUATION.md): a faster result is re-measured interleaved
// with the incumbent before it becomes the best, and the top candidates are
// re-measured at the end of a run. Engine runs on a real SQLite file with the
// in-process FakeEvaluator, whose speedups here are scripted per call.

#include <doctest.h>

#include <map>
#include <mutex>
#include <string>

#include "engine_harness.h"
#include "fake_evaluator.h"
#include "store/store.h"
#include "tests/sqlite_peek.h"

namespace kestrel::testing {
namespace {

const KnobValues kOptimum = {{"A", "4"}, {"B", "2"}, {"C", "1"}};

RunConfig ConfirmingConfig() {
  RunConfig config = Config();
  config.confirm.rounds = 2;
  config.confirm.top = 3;
  return config;
}

// The node of `knobs` in the harness's graph; 0 when there is none.
std::int64_t NodeOf(Harness& harness, const KnobValues& knobs) {
  for (const NodeRecord& node : harness.Nodes()) {
    if (node.knobs == knobs) return node.id;
  }
  return 0;
}

std::int64_t Count(Harness& harness, const std::string& sql) { return QueryInt(harness.db_path(), sql); }

// Calls of the speedup or outcome function per knob configuration: the
// scripted kernels below behave differently on their first and later calls.
class CallCounter {
 public:
  int Next(const KnobValues& knobs) {
    std::lock_guard lock(mutex_);
    return calls_[ToString(knobs)]++;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, int> calls_;
};

TEST_SUITE("engine confirmation") {
  TEST_CASE("a clearly faster result is confirmed against the incumbent, re-measured in turns") {
    StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator;  // deterministic: no noise, every improvement is real
    const RunSummary summary = Must(harness.Run(evaluator, ConfirmingConfig()));
    CHECK(summary.evaluations == 24);
    REQUIRE(summary.best_node.has_value());
    CHECK(*summary.best_node == NodeOf(harness, kOptimum));
    CHECK(summary.best_speedup == doctest::Approx(FakeSpeedup(kOptimum)));

    const std::int64_t rounds = Count(harness, "SELECT count(*) FROM confirmations WHERE against_id IS NOT NULL");
    CHECK(rounds >= 1);
    CHECK(Count(harness, "SELECT count(*) FROM confirmations WHERE against_id IS NOT NULL AND verdict <> 'confirmed'") ==
          0);
    // Each round: the challenger and the incumbent, twice.
    const std::int64_t finals = Count(harness, "SELECT count(*) FROM confirmations WHERE verdict = 'final'");
    CHECK(finals == 3);
    // Every re-measurement is stored (a round whose challenger was overtaken
    // while it ran is kept without a verdict), and none is an evaluation.
    const std::int64_t remeasured = harness.MeasurementsOfRun(harness.last_run(), "confirm");
    CHECK(remeasured >= 4 * rounds + 2 * finals);
    CHECK(evaluator.Evaluations() == 24 + remeasured);
    CHECK(harness.MeasurementsOfRun(harness.last_run()) == 24);
    CHECK(harness.LastRun().evaluations == 24);
    CHECK(*harness.LastRun().best_speedup == doctest::Approx(FakeSpeedup(kOptimum)));
    // The best is shown as confirmed: its latest verdict is the end of run's.
    const auto best = Must(harness.store().Best({std::nullopt, std::nullopt, std::nullopt, 1}));
    REQUIRE(best.size() == 1);
    CHECK(best[0].node_id == *summary.best_node);
    CHECK(best[0].confirmation == ConfirmationVerdict::kFinal);
    CHECK(best[0].measurements >= 3);
  }

  TEST_CASE("one lucky timing within the noise is not a new best") {
    StopGuard guard;
    // A=1 B=3 C=0 times 3.0x once, then 1.0x: a disturbed first timing.
    const KnobValues lucky = {{"A", "1"}, {"B", "3"}, {"C", "0"}};
    CallCounter calls;
    const auto speedup = [&calls, &lucky](const KnobValues& knobs) {
      if (knobs != lucky) return FakeSpeedup(knobs);
      return calls.Next(knobs) == 0 ? 3.0 : 1.0;
    };

    SUBCASE("confirmation on: re-measured, judged within the noise, not the best") {
      Harness harness;
      FakeEvaluator evaluator(speedup);
      const RunSummary summary = Must(harness.Run(evaluator, ConfirmingConfig()));
      const std::int64_t node = NodeOf(harness, lucky);
      REQUIRE(node != 0);
      REQUIRE(summary.best_node.has_value());
      CHECK(*summary.best_node == NodeOf(harness, kOptimum));
      const std::string id = std::to_string(node);
      CHECK(Count(harness, "SELECT count(*) FROM confirmations WHERE verdict = 'within_noise' AND node_id = " + id) ==
            1);
      CHECK(Count(harness, "SELECT count(*) FROM run_events WHERE kind = 'not_confirmed' AND "
                           "json_extract(detail_json, '$.node') = " + id) == 1);
      CHECK(Count(harness, "SELECT count(*) FROM run_events WHERE kind = 'new_best' AND "
                           "json_extract(detail_json, '$.node') = " + id) == 0);
      // Its speedup is the median of its three results {3.0, 1.0, 1.0}.
      CHECK(*Must(harness.store().GetNode(node)).speedup == doctest::Approx(1.0));
      CHECK(*harness.LastRun().best_speedup == doctest::Approx(FakeSpeedup(kOptimum)));
    }
    SUBCASE("confirmation off: the lucky timing would have won") {
      Harness harness;
      FakeEvaluator evaluator(speedup);
      const RunSummary summary = Must(harness.Run(evaluator, Config()));
      REQUIRE(summary.best_node.has_value());
      CHECK(*summary.best_node == NodeOf(harness, lucky));
      CHECK(summary.best_speedup == doctest::Approx(3.0));
    }
  }

  TEST_CASE("a kernel that fails a re-measurement is unstable and never the best") {
    StopGuard guard;
    Harness harness;
    // The optimum measures once, then is wrong: right by luck, not by
    // construction. (The fake asks the outcome function at its build too.)
    CallCounter calls;
    FakeEvaluator evaluator(FakeSpeedup, [&calls](const KnobValues& knobs) {
      if (knobs != kOptimum) return Outcome::kMeasured;
      return calls.Next(knobs) < 2 ? Outcome::kMeasured : Outcome::kWrong;
    });
    const RunSummary summary = Must(harness.Run(evaluator, ConfirmingConfig()));
    const std::int64_t flaky = NodeOf(harness, kOptimum);
    REQUIRE(flaky != 0);
    REQUIRE(summary.best_node.has_value());
    CHECK(*summary.best_node != flaky);
    const KnobValues runner_up = {{"A", "4"}, {"B", "2"}, {"C", "0"}};
    CHECK(*summary.best_node == NodeOf(harness, runner_up));
    const std::string id = std::to_string(flaky);
    CHECK(Count(harness, "SELECT count(*) FROM confirmations WHERE verdict = 'unstable' AND node_id = " + id) >= 1);
    CHECK(Count(harness, "SELECT count(*) FROM run_events WHERE kind = 'new_best' AND "
                         "json_extract(detail_json, '$.node') = " + id) == 0);
    CHECK(*harness.LastRun().best_speedup == doctest::Approx(FakeSpeedup(runner_up)));
    const auto best = Must(harness.store().Best({}));
    for (const BestRow& row : best) {
      if (row.node_id == flaky) CHECK(row.confirmation == ConfirmationVerdict::kUnstable);
    }
  }

  TEST_CASE("the end of a run confirms once; a resumed run that evaluates nothing keeps the incumbent") {
    StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator;
    RunConfig config = ConfirmingConfig();
    config.budget.evaluations = 10;
    const RunSummary first = Must(harness.Run(evaluator, config));
    REQUIRE(first.best_node.has_value());
    CHECK(Count(harness, "SELECT count(*) FROM confirmations WHERE verdict = 'final'") == 3);
    const RunSummary resumed = Must(harness.Resume(evaluator, config));
    // The budget was spent: nothing new; the incumbent is the one saved.
    CHECK(resumed.evaluations == 0);
    REQUIRE(resumed.best_node.has_value());
    CHECK(*resumed.best_node == *first.best_node);
    CHECK(Count(harness, "SELECT count(*) FROM confirmations WHERE verdict = 'final'") == 3);
  }

  TEST_CASE("the best the final confirmation chooses is saved: a resumed run judges against it") {
    StopGuard guard;
    Harness harness;
    RunConfig config = ConfirmingConfig();
    config.budget.evaluations = 12;  // of 24 configurations
    FakeEvaluator steady;
    const RunSummary first = Must(harness.Run(steady, config));
    REQUIRE(first.best_node.has_value());
    const std::int64_t incumbent = *first.best_node;
    const KnobValues incumbent_knobs = Must(harness.store().GetNode(incumbent)).knobs;
    // A second session finds nothing faster, and at its end the incumbent
    // fails its re-measurement: the final confirmation chooses another node.
    FakeEvaluator failing(
        [&](const KnobValues& knobs) { return knobs == incumbent_knobs ? first.best_speedup : 0.1 * FakeSpeedup(knobs); },
        [&](const KnobValues& knobs) { return knobs == incumbent_knobs ? Outcome::kWrong : Outcome::kMeasured; });
    config.budget.evaluations = 16;
    const RunSummary second = Must(harness.Resume(failing, config));
    CHECK(second.evaluations > 0);
    REQUIRE(second.best_node.has_value());
    CHECK(*second.best_node != incumbent);
    // A third session with nothing left to evaluate keeps that choice (it
    // was saved with the run's state), not the incumbent it had before.
    const RunSummary third = Must(harness.Resume(failing, config));
    CHECK(third.evaluations == 0);
    REQUIRE(third.best_node.has_value());
    CHECK(*third.best_node == *second.best_node);
  }
}

}  // namespace
}  // namespace kestrel::testing
