// The suite's metrics (search/suite/suite_metrics.h, docs/SUITE.md): fast_p
// with ties within noise, the geometric mean with failures as 1.0, the gap
// closed to the roofline; then a report built from hand-made rows of a real
// SQLite file.
#include <doctest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "search/suite/suite_metrics.h"
#include "search/suite/suite_report.h"
#include "store/store.h"
#include "tests/store/store_fixture.h"
#include "tests/testing.h"

namespace kestrel {
namespace {

using testing::Must;

// A run of `task` (in a fresh graph) started at `started_at`, as the suite's
// run of `row`.
RunRecord StartSuiteRun(Store& store, const SuiteTaskRecord& row, const std::string& task, std::int64_t host,
                        std::int64_t started_at) {
  RunRecord run;
  run.task_id = Must(store.UpsertTask(testing::MakeTask(task)));
  run.graph_id = Must(store.GraphForTask(run.task_id, true));
  run.host_id = host;
  run.config_json = "{}";
  run.started_at = started_at;
  run.id = Must(store.CreateRun(run));
  Must(store.StartSuiteTask(row.id));
  Must(store.SetSuiteTaskRun(row.id, run.id));
  return run;
}

SuiteTaskResult Correct(std::string name, double speedup, double noise, double baseline = 0.0) {
  SuiteTaskResult task;
  task.task = std::move(name);
  task.level = 1;
  task.state = "done";
  task.run_id = 1;
  task.correct = true;
  task.speedup = speedup;
  task.noise = noise;
  task.baseline_speedup = baseline;
  return task;
}

SuiteTaskResult Failed(std::string name, double baseline = 0.0) {
  SuiteTaskResult task = Correct(std::move(name), 0.0, 0.0, baseline);
  task.correct = false;
  return task;
}

TEST_SUITE("suite metrics") {
  TEST_CASE("a win within its noise is not a win: fast_p asks speedup > p * (1 + noise)") {
    CHECK(FasterBeyondNoise(1.04, 1.0, 0.0));
    CHECK_FALSE(FasterBeyondNoise(1.04, 1.0, 0.05));  // 4% faster, 5% noise: a tie
    CHECK(FasterBeyondNoise(1.06, 1.0, 0.05));
    CHECK_FALSE(FasterBeyondNoise(1.0, 1.0, 0.0));    // as fast is not faster
    CHECK_FALSE(FasterBeyondNoise(3.1, 2.0, 0.6));    // 2 * 1.6 = 3.2
    CHECK(FasterBeyondNoise(0.5, 0.0, 0.9));          // p = 0: any correct kernel
    CHECK_FALSE(FastOverReference(Failed("x"), 0.0));  // no kernel, not even fast_0

    const SuiteTaskResult tie = Correct("tie", 1.5, 0.02);
    CHECK(FastOverReference(tie, 1.0));
    CHECK_FALSE(FastOverReference(tie, 1.5));
    // Over the baseline: 3x over a reference the baseline beats by 2.5x is 1.2x.
    const SuiteTaskResult over = Correct("over", 3.0, 0.1, 2.5);
    CHECK(OverBaseline(over) == doctest::Approx(1.2));
    CHECK(FastOverBaseline(over, 1.0));
    CHECK_FALSE(FastOverBaseline(over, 1.5));
    CHECK_FALSE(FastOverBaseline(Correct("near", 2.6, 0.05, 2.5), 1.0));  // 1.04x with 5% noise
    CHECK_FALSE(FastOverBaseline(Correct("none", 9.0, 0.0), 0.0));         // no baseline, no fast_p over it
  }

  TEST_CASE("the geometric mean counts a failure as 1.0 and the shares count every searched task") {
    const std::vector<SuiteTaskResult> tasks = {Correct("a", 4.0, 0.0), Correct("b", 2.0, 0.5), Failed("c"),
                                                Correct("d", 0.5, 0.0)};
    const SuiteSummary summary = Summarize(tasks, 1);
    CHECK(summary.tasks == 4);
    CHECK(summary.correct == 3);
    // (4 * 2 * 1 * 0.5) ^ (1/4) = 4 ^ (1/4)
    CHECK(summary.geomean_reference == doctest::Approx(std::pow(4.0, 0.25)));
    CHECK(summary.fast_reference[0] == doctest::Approx(0.75));  // p = 0: correct
    CHECK(summary.fast_reference[1] == doctest::Approx(0.5));   // a, and b (2 > 1.5)
    CHECK(summary.fast_reference[2] == doctest::Approx(0.25));  // b is not beyond 1.5 * 1.5
    CHECK(summary.fast_reference[3] == doctest::Approx(0.25));  // a only
    CHECK(summary.with_baseline == 0);

    // A skipped task scores nothing and counts apart.
    std::vector<SuiteTaskResult> with_skip = tasks;
    with_skip.push_back(Failed("cuda_task"));
    with_skip.back().state = "skipped";
    const SuiteSummary skipping = Summarize(with_skip, 1);
    CHECK(skipping.tasks == 4);
    CHECK(skipping.skipped == 1);
    CHECK(skipping.geomean_reference == doctest::Approx(summary.geomean_reference));
    CHECK(GeometricMean({}) == 0.0);
  }

  TEST_CASE("the share of the gap to the roofline closed is (t_ref - t_best) / (t_ref - t_roofline)") {
    // t_ref = 1, t_best = 1/4, roofline fraction 0.5: t_roofline = 1/8; (1 - 1/4) / (1 - 1/8) = 6/7.
    CHECK(*GapClosed(4.0, 0.5) == doctest::Approx(6.0 / 7.0));
    CHECK(*GapClosed(1.0, 0.3) == doctest::Approx(0.0));     // as fast as the reference: nothing closed
    CHECK(*GapClosed(2.0, 2.0 * 0.999) > 0.99);               // at the roofline: nearly all of it
    CHECK(*GapClosed(0.5, 0.1) < 0.0);                        // slower than the reference
    CHECK_FALSE(GapClosed(3.0, 0.0).has_value());            // roofline unknown
    CHECK_FALSE(GapClosed(0.5, 0.6).has_value());            // the reference beats the roofline: no gap
    SuiteTaskResult a = Correct("a", 4.0, 0.0);
    a.roofline_fraction = 0.5;
    SuiteTaskResult failed = Failed("b");
    failed.roofline_fraction = 0.2;
    const SuiteSummary summary = Summarize({a, failed}, 1);
    CHECK(*summary.mean_gap_closed == doctest::Approx(3.0 / 7.0));  // a failure closes nothing
    CHECK(*summary.mean_roofline == doctest::Approx(0.5));
  }

  TEST_CASE("evaluations per hour, time to the first correct kernel and spend per confirmed speedup") {
    SuiteTaskResult a = Correct("a", 3.0, 0.0);
    a.evaluations = 30;
    a.active_seconds = 900;
    a.first_correct_s = 4.0;
    a.llm_usd = 1.5;
    SuiteTaskResult b = Correct("b", 1.01, 0.05);  // within noise: no confirmed speedup
    b.evaluations = 10;
    b.active_seconds = 900;
    b.first_correct_s = 8.0;
    b.llm_usd = 0.5;
    const SuiteSummary summary = Summarize({a, b}, 2);
    CHECK(summary.level == 2);
    CHECK(summary.evaluations_per_hour == doctest::Approx(80.0));  // 40 in half an hour
    CHECK(*summary.mean_first_correct_s == doctest::Approx(6.0));
    CHECK(summary.llm_usd == doctest::Approx(2.0));
    CHECK(*summary.usd_per_speedup == doctest::Approx(2.0));  // $2 for one confirmed speedup
    CHECK_FALSE(Summarize({b}, 2).usd_per_speedup.has_value());
  }

  TEST_CASE("a task with a baseline and no correct kernel counts over the baseline at the reference's standing") {
    // Its run stored the baseline its session timed (a "baseline" event);
    // the task was left out of every baseline figure.
    testing::TempDir dir;
    auto store = Must(Store::Open(dir / "suite.db"));
    const auto host = Must(store->UpsertHost(testing::MakeHost("h")));
    std::vector<SuiteTaskRecord> rows(1);
    rows[0].task = "softmax";
    rows[0].level = 1;
    const auto suite_id = Must(store->CreateSuite({0, "{}", R"({"evaluations":2})", "{}", SuiteState::kRunning, 0, 0}, rows));
    const auto tasks = Must(store->SuiteTasks(suite_id));
    const RunRecord run = StartSuiteRun(*store, tasks[0], "softmax", host, NowMillis());
    const auto run_id = run.id;
    Must(store->AddRunEvent(run_id, "baseline", R"({"speedup": 2.0})"));
    const auto node = Must(store->AddNode(NewNodeRecord({"wrong", {}, "c++", {}}, run.graph_id, run_id, "m"), std::nullopt));
    Measurement wrong;
    wrong.outcome = Outcome::kWrong;
    Must(store->RecordMeasurement(node, run_id, host, wrong));
    Must(store->FinishRun(run_id, RunStatus::kFinished, "evaluations"));
    Must(store->FinishSuiteTask(tasks[0].id, SuiteTaskState::kDone, ""));

    const SuiteReport report = Must(BuildSuiteReport(*store, suite_id));
    REQUIRE(report.tasks.size() == 1);
    CHECK_FALSE(report.tasks[0].correct);
    CHECK(report.tasks[0].baseline_speedup == doctest::Approx(2.0));
    REQUIRE(report.levels.size() == 1);
    CHECK(report.levels[0].with_baseline == 1);
    CHECK(report.levels[0].geomean_baseline == doctest::Approx(0.5));
    CHECK(report.levels[0].fast_baseline[0] == 0.0);
  }

  TEST_CASE("a report from hand-made rows of a real database: best per run, noise, baseline, first correct") {
    testing::TempDir dir;
    auto store = Must(Store::Open(dir / "suite.db"));
    const auto host = Must(store->UpsertHost(testing::MakeHost("h")));
    std::vector<SuiteTaskRecord> rows(2);
    rows[0].task = "triad";
    rows[0].level = 1;
    rows[1].position = 1;
    rows[1].task = "colsum";
    rows[1].level = 1;
    const auto suite_id = Must(store->CreateSuite({0, "{}", R"({"evaluations":2})", "{}", SuiteState::kRunning, 0, 0}, rows));
    const auto tasks = Must(store->SuiteTasks(suite_id));

    // triad: two measured nodes and a wrong one; the best is 2.4x over the
    // reference, measured once with a 10% sample spread, the baseline at 1.2x.
    const RunRecord run = StartSuiteRun(*store, tasks[0], "triad", host, NowMillis() - 5000);
    const auto run_id = run.id;
    const auto measure = [&](const std::string& code, Outcome outcome, double speedup) {
      const auto node = Must(store->AddNode(NewNodeRecord({code, {}, "c++", {}}, run.graph_id, run_id, "m"), std::nullopt));
      Measurement measurement;
      measurement.outcome = outcome;
      if (outcome == Outcome::kMeasured) {
        measurement.speedup = speedup;
        measurement.baseline_speedup = 1.2;
        measurement.roofline_fraction = 0.3;
        ShapeTiming shape;
        shape.shape = {{"n", 1000}};
        shape.speedup = speedup;
        shape.candidate = {1.0, 0.95, 1.05, 0.10, 10};
        shape.reference = {speedup, speedup, speedup, 0.0, 10};
        measurement.shapes = {shape};
      }
      Must(store->RecordMeasurement(node, run_id, host, measurement));
      return node;
    };
    measure("wrong", Outcome::kWrong, 0.0);
    measure("seed", Outcome::kMeasured, 1.0);
    const auto best = measure("fast", Outcome::kMeasured, 2.4);
    Must(store->FinishRun(run_id, RunStatus::kFinished, "evaluations"));
    Must(store->FinishSuiteTask(tasks[0].id, SuiteTaskState::kDone, ""));
    Must(store->FinishSuiteTask(tasks[1].id, SuiteTaskState::kSkipped, "the cuda evaluator does not run cpp tasks"));

    const SuiteReport report = Must(BuildSuiteReport(*store, suite_id));
    REQUIRE(report.tasks.size() == 2);
    const SuiteTaskResult& triad = report.tasks[0];
    CHECK(triad.correct);
    CHECK(triad.best_node == best);
    CHECK(triad.speedup == doctest::Approx(2.4));
    CHECK(triad.noise == doctest::Approx(0.10));  // one measurement: its sample spread
    CHECK(OverBaseline(triad) == doctest::Approx(2.0));
    CHECK(FastOverReference(triad, 2.0));          // 2.4 > 2 * 1.1
    CHECK_FALSE(FastOverBaseline(triad, 2.0));     // 2.0 is not beyond 2 * 1.1
    CHECK(triad.evaluations == 3);
    REQUIRE(triad.first_correct_s.has_value());
    CHECK(*triad.first_correct_s >= 4.0);  // the run started 5 s before its first result
    CHECK(report.tasks[1].state == "skipped");
    REQUIRE(report.levels.size() == 1);
    CHECK(report.levels[0].tasks == 1);
    CHECK(report.levels[0].skipped == 1);
    CHECK(report.levels[0].geomean_reference == doctest::Approx(2.4));

    const nlohmann::json json = ToJson(report);
    CHECK(json.at("tasks")[0].at("fast_p_reference").at("2") == true);
    CHECK(json.at("tasks")[0].at("fast_p_baseline").at("2") == false);
    CHECK(json.at("tasks")[1].at("speedup").is_null());
    CHECK(json.at("levels")[0].at("pass_rate") == 1.0);
    CHECK(nlohmann::json::parse(json.dump()) == json);

    // A person labels the best a reward hack: the next one counts (it was
    // still scored correct at 2.4x); a second such label leaves none.
    HumanActionRecord label;
    label.graph_id = run.graph_id;
    label.node_id = best;
    label.kind = HumanActionKind::kLabel;
    label.text = "reward_hack";
    label.author = "test";
    Must(store->AddHumanAction(label));
    const SuiteReport relabelled = Must(BuildSuiteReport(*store, suite_id));
    CHECK(relabelled.tasks[0].correct);
    CHECK(relabelled.tasks[0].speedup == doctest::Approx(1.0));
    CHECK(relabelled.tasks[0].labelled_out == 1);
    CHECK(ToJson(relabelled).at("tasks")[0].at("labelled_out") == 1);
    label.node_id = relabelled.tasks[0].best_node;
    label.text = "wrong";
    Must(store->AddHumanAction(label));
    const SuiteReport none = Must(BuildSuiteReport(*store, suite_id));
    CHECK_FALSE(none.tasks[0].correct);
    CHECK(none.tasks[0].labelled_out == 2);
    CHECK(none.levels[0].correct == 0);
  }
}

}  // namespace
}  // namespace kestrel
