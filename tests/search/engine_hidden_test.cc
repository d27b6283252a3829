// Hidden shapes in the engine (engine_hidden.cc): a result that would
// challenge the best is checked on hidden shapes before it is confirmed,
// the top candidates a session did not check are checked at its final
// confirmation, and a kernel that fails either way is `wrong`, never the
// best, never in `best`. The engine on a real SQLite file with the
// FakeEvaluator, whose check fails the candidates a test names.

#include <doctest.h>

#include <set>

#include "engine_harness.h"
#include "fake_evaluator.h"

using namespace kestrel;
using testing::FakeEvaluator;
using testing::Harness;
using testing::Must;
using testing::StopGuard;

namespace {

Task RangedTask() {
  Task task = testing::MakeFakeTask();
  task.shape_ranges = {{"n", {1, 5000}}};
  return task;
}

bool FastestFamily(const KnobValues& knobs) { return testing::KnobInt(knobs, "A") == 4; }

struct HiddenEvent {
  std::int64_t node = 0;
  bool passed = false;
  nlohmann::json shapes;
};

std::vector<HiddenEvent> HiddenEvents(Harness& harness) {
  std::vector<HiddenEvent> events;
  for (const auto& event : Must(harness.store().RunEvents(harness.last_run()))) {
    if (event.kind != "hidden_shape") continue;
    const auto detail = nlohmann::json::parse(event.detail_json);
    events.push_back({detail.at("node").get<std::int64_t>(), detail.at("passed").get<bool>(), detail.at("shapes")});
  }
  return events;
}

}  // namespace

TEST_SUITE("hidden shapes") {
  TEST_CASE("a challenger that fails its hidden shapes is wrong and never the best") {
    StopGuard guard;
    Harness harness(RangedTask());
    FakeEvaluator evaluator;
    evaluator.FailHiddenShapes(FastestFamily);
    RunConfig config = testing::Config();
    config.budget.evaluations = 24;  // the whole space
    config.confirm = {2, 3};
    const RunSummary summary = Must(harness.Run(evaluator, config));

    // Every A=4 kernel beats every other, so each challenged the best and failed.
    int fastest = 0;
    for (const NodeRecord& node : harness.Nodes()) {
      if (node.status != NodeStatus::kMeasured && node.status != NodeStatus::kWrong) continue;
      CAPTURE(node.id);
      if (!FastestFamily(node.knobs)) {
        CHECK(node.status == NodeStatus::kMeasured);
        continue;
      }
      ++fastest;
      CHECK(node.status == NodeStatus::kWrong);
      CHECK(node.reason.rfind("hidden shape: ", 0) == 0);
      // The verdict keeps what it was measured at on the task's own shapes.
      const auto measurements = Must(harness.store().GetMeasurements(node.id));
      REQUIRE(measurements.size() == 1);
      CHECK(measurements[0].measurement.log.find("measured on the task's own shapes") != std::string::npos);
      CHECK(measurements[0].measurement.shapes.size() == 1);
    }
    CHECK(fastest == 6);
    CHECK(summary.hidden_failures == 6);
    CHECK(summary.hidden_checks >= 7);  // the failures and at least the best's own check
    REQUIRE(summary.best_node);
    CHECK(*summary.best_node == Must(harness.store().Best({.task = "fake_task", .top = 1})).at(0).node_id);
    for (const BestRow& row : Must(harness.store().Best({.task = "fake_task", .top = 30}))) {
      CHECK_FALSE(FastestFamily(row.knobs));
    }
    // The run events hold the sizes (never a measurement's text).
    std::set<std::int64_t> failed;
    for (const HiddenEvent& event : HiddenEvents(harness)) {
      CHECK(event.shapes == nlohmann::json::parse(R"([{"n": 77}])"));
      if (!event.passed) failed.insert(event.node);
    }
    CHECK(failed.size() == 6);
    // Every check of a node drew the same seed: the check is reproducible.
    for (const auto& [identity, seeds] : evaluator.HiddenChecksByIdentity()) {
      CAPTURE(identity);
      CHECK(std::set<std::uint64_t>(seeds.begin(), seeds.end()).size() == 1);
    }
  }

  TEST_CASE("the final confirmation checks the top candidates this session did not") {
    StopGuard guard;
    Harness harness(RangedTask());
    RunConfig config = testing::Config();
    config.confirm = {2, 3};
    config.budget.evaluations = 23;  // all but one configuration
    FakeEvaluator first;             // its checks pass
    (void)Must(harness.Run(first, config));
    // A new process: it has checked nothing, and now the A=4 kernels fail.
    FakeEvaluator again;
    again.FailHiddenShapes(FastestFamily);
    config.budget.evaluations = 24;
    const RunSummary summary = Must(harness.Resume(again, config));
    CHECK(summary.evaluations == 1);
    int found_late = 0;
    for (const NodeRecord& node : harness.Nodes()) {
      for (const auto& record : Must(harness.store().GetMeasurements(node.id))) {
        if (record.purpose != "hidden_shape") continue;
        CAPTURE(node.id);
        ++found_late;
        CHECK(FastestFamily(node.knobs));
        CHECK(node.status == NodeStatus::kWrong);
        CHECK(record.measurement.outcome == Outcome::kWrong);
      }
    }
    CHECK(found_late >= 5);  // the A=4 kernels measured by the first session reached the top in turn
    // The top it confirmed is clean, and so is the run's best.
    for (const BestRow& row : Must(harness.store().Best({.task = "fake_task", .top = 3}))) {
      CHECK_FALSE(FastestFamily(row.knobs));
    }
    REQUIRE(summary.best_node);
    CHECK_FALSE(FastestFamily(Must(harness.store().GetNode(*summary.best_node)).knobs));
  }

  TEST_CASE("a task without shape ranges is never checked") {
    StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator;
    evaluator.FailHiddenShapes(FastestFamily);
    RunConfig config = testing::Config();
    config.budget.evaluations = 24;
    const RunSummary summary = Must(harness.Run(evaluator, config));
    CHECK(evaluator.HiddenChecksByIdentity().empty());
    CHECK(summary.hidden_checks == 0);
    REQUIRE(summary.best_node);
    CHECK(FastestFamily(Must(harness.store().GetNode(*summary.best_node)).knobs));
  }
}
