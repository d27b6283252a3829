// Store queries and run bookkeeping: Best(), ListRuns(), FinishRun(),
// AddRunEvent(), LLM calls, on a real SQLite file.
#include <doctest.h>

#include "store/store.h"
#include "tests/store/store_fixture.h"
#include "tests/testing.h"

namespace kestrel {
namespace {

using testing::MakeHost;
using testing::MakeMeasured;
using testing::MakeNode;
using testing::MakeTask;
using testing::MakeWrong;
using testing::Must;
using testing::QueryInt;

struct World {
  testing::TempDir dir;
  std::unique_ptr<Store> store;
  std::int64_t task_a = 0, task_b = 0, graph_a = 0, graph_b = 0, alpha = 0, beta = 0;

  World() {
    store = Must(Store::Open(dir / "kestrel.db"));
    task_a = Must(store->UpsertTask(MakeTask("a")));
    task_b = Must(store->UpsertTask(MakeTask("b")));
    graph_a = Must(store->GraphForTask(task_a, false));
    graph_b = Must(store->GraphForTask(task_b, false));
    alpha = Must(store->UpsertHost(MakeHost("alpha")));
    beta = Must(store->UpsertHost(MakeHost("beta")));
  }
  std::int64_t Run(std::int64_t task, std::int64_t graph, std::int64_t started_at) {
    RunRecord run;
    run.task_id = task;
    run.graph_id = graph;
    run.host_id = alpha;
    run.config_json = "{}";
    run.started_at = started_at;
    return Must(store->CreateRun(run));
  }
  std::int64_t Node(std::int64_t graph, std::int64_t run, const std::string& knob) {
    return Must(store->AddNode(MakeNode(graph, run, "void f();", knob), std::nullopt));
  }
  std::int64_t Measure(std::int64_t node, std::int64_t run, std::int64_t host, double speedup,
                       double baseline_speedup = 0.0) {
    Measurement measured = MakeMeasured(speedup, 1, 3);
    measured.baseline_speedup = baseline_speedup;
    return Must(store->RecordMeasurement(node, run, host, measured));
  }
};

std::vector<std::int64_t> Nodes(const std::vector<BestRow>& rows) {
  std::vector<std::int64_t> ids;
  for (const auto& row : rows) ids.push_back(row.node_id);
  return ids;
}

TEST_SUITE("store") {
  TEST_CASE("same code: the twin is a measured node of the graph timed on this host; the copy is stored, not ranked, not counted") {
    World w;
    const std::int64_t run = w.Run(w.task_a, w.graph_a, 1000);
    const std::int64_t first = w.Node(w.graph_a, run, "1");
    const std::int64_t twin = w.Node(w.graph_a, run, "2");
    const std::int64_t copy = w.Node(w.graph_a, run, "3");
    const std::int64_t other_graph = w.Node(w.graph_b, run, "2");
    for (const std::int64_t node : {first, twin, copy, other_graph}) Must(w.store->SetCodeHash(node, "c0de"));
    Must(w.store->SetCodeHash(first, "other"));
    // Not measured yet (built, or failed): no twin.
    CHECK_FALSE(Must(w.store->FindSameCode(w.graph_a, "c0de", w.alpha, copy)).has_value());
    Must(w.store->RecordMeasurement(twin, run, w.alpha, MakeWrong()));
    CHECK_FALSE(Must(w.store->FindSameCode(w.graph_a, "c0de", w.alpha, copy)).has_value());
    // Measured on another host only: no twin here.
    w.Measure(twin, run, w.beta, 2.0);
    CHECK_FALSE(Must(w.store->FindSameCode(w.graph_a, "c0de", w.alpha, copy)).has_value());
    CHECK(Must(w.store->FindSameCode(w.graph_a, "c0de", w.beta, copy)) == twin);
    w.Measure(twin, run, w.alpha, 2.5);
    CHECK(Must(w.store->FindSameCode(w.graph_a, "c0de", w.alpha, copy)) == twin);
    CHECK_FALSE(Must(w.store->FindSameCode(w.graph_a, "c0de", w.alpha, twin)).has_value());  // not itself
    CHECK_FALSE(Must(w.store->FindSameCode(w.graph_a, "", w.alpha, copy)).has_value());      // unknown code
    CHECK_FALSE(Must(w.store->FindSameCode(w.graph_b, "c0de", w.alpha, other_graph)).has_value());

    Measurement copied = MakeMeasured(2.5, 1, 3);
    copied.reason = "same code as node " + std::to_string(twin);
    Must(w.store->RecordSameCode(copy, twin, run, w.alpha, copied));
    const NodeRecord node = Must(w.store->GetNode(copy));
    CHECK(node.status == NodeStatus::kMeasured);
    CHECK(node.speedup == 2.5);
    CHECK(node.reason == copied.reason);
    const auto measurements = Must(w.store->GetMeasurements(copy));
    REQUIRE(measurements.size() == 1);
    CHECK(measurements[0].purpose == "same_code");
    bool edge = false;
    for (const EdgeRecord& e : Must(w.store->LoadEdges(w.graph_a))) {
      edge = edge || (e.parent == copy && e.child == twin && e.kind == EdgeKind::kSameCode);
    }
    CHECK(edge);
    // A copy is not a twin of later nodes (the timed node is), and Best ranks the timed node only.
    CHECK(Must(w.store->FindSameCode(w.graph_a, "c0de", w.alpha, 0)) == twin);
    BestQuery query;
    query.task = "a";
    CHECK(Nodes(Must(w.store->Best(query))) == std::vector<std::int64_t>{twin});
    // The run's evaluations are its timed results (twin's three; the copy is none).
    CHECK(Must(w.store->GetRun(run)).evaluations == 3);
    CHECK(Must(w.store->GetRun(run)).same_code == 1);
    CHECK(w.store->RecordSameCode(copy + 100, twin, run, w.alpha, copied).error().IsNotFound());
  }

  TEST_CASE("Best ranks nodes by the median of their measured results, filtered") {
    World w;
    const auto run1 = w.Run(w.task_a, w.graph_a, 100);
    const auto run2 = w.Run(w.task_a, w.graph_a, 200);
    const auto run3 = w.Run(w.task_b, w.graph_b, 300);
    const auto n1 = w.Node(w.graph_a, run1, "1");
    const auto n2 = w.Node(w.graph_a, run1, "2");
    const auto n3 = w.Node(w.graph_a, run2, "3");
    const auto n4 = w.Node(w.graph_b, run3, "4");
    const auto n5 = w.Node(w.graph_a, run2, "5");
    const auto n6 = w.Node(w.graph_a, run2, "6");
    const auto m1 = w.Measure(n1, run1, w.alpha, 1.5);
    w.Measure(n1, run2, w.beta, 3.0);  // re-measured on another host, in a later run
    w.Measure(n2, run1, w.alpha, 2.0);
    w.Measure(n3, run2, w.alpha, 2.0);  // ties n2: the lower node id ranks first
    w.Measure(n4, run3, w.beta, 9.0, 12.0);  // task b has an expert baseline, 12x the reference
    Must(w.store->RecordMeasurement(n5, run2, w.alpha, MakeWrong()));  // never ranked
    Must(w.store->SetNodeStatus(n6, NodeStatus::kBuilt, "", ""));

    SUBCASE("no filter") {
      const auto rows = Must(w.store->Best({}));
      CHECK(Nodes(rows) == std::vector<std::int64_t>{n4, n1, n2, n3});
      CHECK(rows[0].task_name == "b");
      CHECK(rows[0].baseline_speedup == 12.0);
      CHECK(SpeedupOverBaseline(rows[0].speedup, rows[0].baseline_speedup) == doctest::Approx(0.75));
      CHECK(rows[1].baseline_speedup == 0.0);
      CHECK(rows[1].speedup == doctest::Approx(2.25));  // the median of 1.5 and 3.0
      CHECK(rows[1].measurements == 2);
      CHECK(rows[1].spread == doctest::Approx(1.5 / 2.25));
      CHECK_FALSE(rows[1].confirmation);
      CHECK(rows[1].measurement_id == m1);  // of two, the lower middle one's is the row's measurement
      CHECK(rows[1].host_name == "alpha");
      CHECK(rows[1].run_id == run1);
      CHECK(rows[1].knobs == MakeNode(0, 0, "", "1").knobs);
      CHECK(rows[1].mutation == "knob KNOB ->1");
      CHECK(rows[1].measured_at > 0);
    }
    SUBCASE("task and top") {
      CHECK(Nodes(Must(w.store->Best({"a", std::nullopt, std::nullopt, 10}))) == std::vector<std::int64_t>{n1, n2, n3});
      CHECK(Nodes(Must(w.store->Best({"a", std::nullopt, std::nullopt, 2}))) == std::vector<std::int64_t>{n1, n2});
      CHECK(Must(w.store->Best({"nope", std::nullopt, std::nullopt, 10})).empty());
      CHECK(Must(w.store->Best({std::nullopt, std::nullopt, std::nullopt, 0})).size() == 4);  // 0: no limit
    }
    SUBCASE("host: the measurements taken on that host") {
      const auto rows = Must(w.store->Best({std::nullopt, std::nullopt, std::string("alpha"), 10}));
      CHECK(Nodes(rows) == std::vector<std::int64_t>{n2, n3, n1});
      CHECK(rows[2].speedup == 1.5);
      CHECK(rows[2].measurement_id == m1);
      CHECK(rows[2].run_id == run1);
    }
    SUBCASE("run: the nodes that run made, each over all its results, as `show` gives them") {
      // Once: the measurements taken during the run, so that run 2 listed
      // run 1's n1 at its re-measurement's 3.0x, as run 2's.
      const auto first = Must(w.store->Best({std::nullopt, run1, std::nullopt, 10}));
      CHECK(Nodes(first) == std::vector<std::int64_t>{n1, n2});
      CHECK(first[0].speedup == doctest::Approx(2.25));  // its re-measurement in run 2 included
      CHECK(first[0].run_id == run1);
      const auto second = Must(w.store->Best({std::nullopt, run2, std::nullopt, 10}));
      CHECK(Nodes(second) == std::vector<std::int64_t>{n3});
      CHECK(second[0].run_id == run2);
      CHECK(Nodes(Must(w.store->Best({"b", run2, std::nullopt, 10}))).empty());
    }
  }

  TEST_CASE("ListRuns is newest first with derived evaluations and best speedup") {
    World w;
    const auto old_run = w.Run(w.task_a, w.graph_a, 1000);
    const auto new_run = w.Run(w.task_b, w.graph_b, 2000);
    const auto n1 = w.Node(w.graph_a, old_run, "1");
    const auto n2 = w.Node(w.graph_a, old_run, "2");
    w.Node(w.graph_a, old_run, "3");  // proposed: not an evaluation
    const auto n4 = w.Node(w.graph_a, old_run, "4");
    const auto n5 = w.Node(w.graph_a, old_run, "5");
    w.Measure(n1, old_run, w.alpha, 1.25);
    w.Measure(n2, old_run, w.alpha, 2.5);
    Measurement failed;
    failed.outcome = Outcome::kBuildFailed;
    failed.reason = "error: x";
    Must(w.store->RecordMeasurement(n4, old_run, w.alpha, failed));  // an evaluation, not ranked
    // A status set without a recorded result is not an evaluation of the run.
    Must(w.store->SetNodeStatus(n5, NodeStatus::kBuilt, "", ""));

    const auto runs = Must(w.store->ListRuns());
    REQUIRE(runs.size() == 2);
    CHECK(runs[0].id == new_run);
    CHECK(runs[0].task_name == "b");
    CHECK(runs[0].evaluations == 0);
    CHECK_FALSE(runs[0].best_speedup);
    CHECK(runs[1].id == old_run);
    CHECK(runs[1].evaluations == 3);
    REQUIRE(runs[1].best_speedup);
    CHECK(*runs[1].best_speedup == 2.5);
    CHECK(w.store->GetRun(99).error().IsNotFound());

    // As Best() ranks them: a same-code copy of n2 is not the run's best
    // (its twin is), and n2 found wrong on a hidden shape is not either.
    const auto copy = w.Node(w.graph_a, old_run, "6");
    Must(w.store->RecordSameCode(copy, n2, old_run, w.alpha, MakeMeasured(2.5)));
    Must(w.store->RecordMeasurement(n2, old_run, w.alpha, MakeWrong(), "hidden_shape"));
    CHECK(Nodes(Must(w.store->Best({"a", old_run, std::nullopt, 10}))) == std::vector<std::int64_t>{n1});
    REQUIRE(Must(w.store->GetRun(old_run)).best_speedup);
    CHECK(*Must(w.store->GetRun(old_run)).best_speedup == 1.25);
  }

  TEST_CASE("RecordConfirmation stores re-measurements apart, sets medians, and Best shows the verdict") {
    World w;
    const auto run = w.Run(w.task_a, w.graph_a, 100);
    const auto challenger = w.Node(w.graph_a, run, "1");
    const auto incumbent = w.Node(w.graph_a, run, "2");
    const auto flaky = w.Node(w.graph_a, run, "3");
    w.Measure(incumbent, run, w.alpha, 2.0);
    w.Measure(challenger, run, w.alpha, 2.6);  // one lucky draw
    w.Measure(flaky, run, w.alpha, 5.0);

    ConfirmationRecord round;
    round.run_id = run;
    round.host_id = w.alpha;
    round.node_id = challenger;
    round.against_id = incumbent;
    round.verdict = ConfirmationVerdict::kWithinNoise;
    round.node_median = 2.05;
    round.against_median = 2.0;
    round.noise = 0.3;
    round.samples = 3;
    ConfirmationRecord unstable;
    unstable.run_id = run;
    unstable.host_id = w.alpha;
    unstable.node_id = flaky;
    unstable.verdict = ConfirmationVerdict::kUnstable;
    unstable.node_median = 5.0;
    unstable.samples = 1;
    const std::vector<std::pair<std::int64_t, Measurement>> remeasured = {
        {challenger, MakeMeasured(2.0, 1, 3)}, {incumbent, MakeMeasured(1.9, 1, 3)},
        {challenger, MakeMeasured(2.1, 1, 3)}, {incumbent, MakeMeasured(2.05, 1, 3)},
        {flaky, MakeWrong()}};
    const auto medians = Must(w.store->RecordConfirmation(run, w.alpha, {round, unstable}, remeasured));
    // Medians over every measured result: {2.0, 2.1, 2.6} and {1.9, 2.0, 2.05}; flaky keeps its one result.
    CHECK(medians.at(challenger) == doctest::Approx(2.1));
    CHECK(medians.at(incumbent) == doctest::Approx(2.0));
    CHECK(medians.at(flaky) == doctest::Approx(5.0));
    CHECK(*Must(w.store->GetNode(challenger)).speedup == doctest::Approx(2.1));
    CHECK(*Must(w.store->GetNode(incumbent)).speedup == doctest::Approx(2.0));

    const auto measurements = Must(w.store->GetMeasurements(challenger));
    REQUIRE(measurements.size() == 3);
    CHECK(measurements[0].purpose == "search");
    CHECK(measurements[1].purpose == "confirm");
    CHECK(measurements[2].purpose == "confirm");
    CHECK(measurements[1].run_id == run);

    const auto rows = Must(w.store->Best({"a", std::nullopt, std::nullopt, 10}));
    REQUIRE(Nodes(rows) == std::vector<std::int64_t>{flaky, challenger, incumbent});
    CHECK(rows[0].confirmation == ConfirmationVerdict::kUnstable);
    CHECK(rows[1].confirmation == ConfirmationVerdict::kWithinNoise);
    CHECK(rows[1].speedup == doctest::Approx(2.1));
    CHECK(rows[1].measurements == 3);
    CHECK(rows[1].spread == doctest::Approx((2.6 - 2.0) / 2.1));
    CHECK_FALSE(rows[2].confirmation);  // the incumbent had no round of its own
    CHECK(rows[2].measurements == 3);

    const RunRecord got = Must(w.store->GetRun(run));
    CHECK(got.evaluations == 3);                           // re-measurements are no evaluations
    CHECK(*got.best_speedup == doctest::Approx(2.1));      // the unstable node is not the run's best
    const auto path = w.dir / "kestrel.db";
    CHECK(QueryInt(path, "SELECT count(*) FROM measurements WHERE purpose = 'confirm'") == 5);
    CHECK(QueryInt(path, "SELECT count(*) FROM confirmations") == 2);
    // An unknown node fails the whole round: nothing of it is stored.
    CHECK_FALSE(w.store->RecordConfirmation(run, w.alpha, {round}, {{challenger, MakeMeasured(9.0)}, {4242, MakeMeasured(1.0)}})
                    .has_value());
    CHECK(QueryInt(path, "SELECT count(*) FROM measurements WHERE purpose = 'confirm'") == 5);
    CHECK(*Must(w.store->GetNode(challenger)).speedup == doctest::Approx(2.1));
  }

  TEST_CASE("FinishRun and AddRunEvent") {
    World w;
    const auto run = w.Run(w.task_a, w.graph_a, 0);
    CHECK(Must(w.store->GetRun(run)).started_at > 0);  // 0: now
    Must(w.store->FinishRun(run, RunStatus::kInterrupted, "signal"));
    const RunRecord got = Must(w.store->GetRun(run));
    CHECK(got.status == RunStatus::kInterrupted);
    CHECK(got.stop_reason == "signal");
    CHECK(got.finished_at >= got.started_at);
    CHECK(w.store->FinishRun(4242, RunStatus::kFinished, "time").error().IsNotFound());

    Must(w.store->AddRunEvent(run, "start", R"({"workers": 4})"));
    Must(w.store->AddRunEvent(run, "stop", ""));
    const auto path = w.dir / "kestrel.db";
    CHECK(QueryInt(path, "SELECT count(*) FROM run_events WHERE run_id = " + std::to_string(run)) == 2);
    CHECK(QueryInt(path, "SELECT json_extract(detail_json, '$.workers') FROM run_events WHERE kind = 'start'") == 4);
    CHECK(w.store->AddRunEvent(run, "bad", "{not json").error().IsInvalidArgument());
    CHECK(w.store->AddRunEvent(4242, "start", "{}").error().IsNotFound());
  }

  TEST_CASE("LLM calls round trip") {
    World w;
    const auto run = w.Run(w.task_a, w.graph_a, 10);
    const auto node = w.Node(w.graph_a, run, "1");
    LlmCallRecord call;
    call.run_id = run;
    call.node_id = node;
    call.provider = "openai";
    call.model = "gpt-x";
    call.prompt = R"([{"role": "user", "content": "make it faster"}])";
    call.response = "```cpp\nvoid f();\n```";
    call.input_tokens = 1200;
    call.output_tokens = 340;
    call.cost_usd = 0.0123;
    call.latency_s = 4.5;
    call.http_status = 200;
    call.retries = 1;
    call.error = "";
    call.created_at = 777;
    const auto id = Must(w.store->AddLlmCall(call));
    LlmCallRecord orphan = call;  // a failed call that produced no node
    orphan.node_id.reset();
    orphan.error = "HTTP 429";
    Must(w.store->AddLlmCall(orphan));

    const auto calls = Must(w.store->LlmCallsForNode(node));
    REQUIRE(calls.size() == 1);
    const LlmCallRecord& got = calls[0];
    CHECK(got.id == id);
    CHECK(got.run_id == run);
    CHECK(got.node_id == std::optional<std::int64_t>(node));
    CHECK(got.provider == call.provider);
    CHECK(got.model == call.model);
    CHECK(got.prompt == call.prompt);
    CHECK(got.response == call.response);
    CHECK(got.input_tokens == call.input_tokens);
    CHECK(got.output_tokens == call.output_tokens);
    CHECK(got.cost_usd == call.cost_usd);
    CHECK(got.latency_s == call.latency_s);
    CHECK(got.http_status == call.http_status);
    CHECK(got.retries == call.retries);
    CHECK(got.error == call.error);
    CHECK(got.created_at == 777);
    CHECK(QueryInt(w.dir / "kestrel.db", "SELECT count(*) FROM llm_calls WHERE node_id IS NULL") == 1);
  }

  TEST_CASE("missing rows are NotFound") {
    World w;
    CHECK(w.store->GetNode(5).error().IsNotFound());
    CHECK(w.store->SetNodeStatus(5, NodeStatus::kBuilt, "", "").error().IsNotFound());
    CHECK(w.store->RecordMeasurement(5, 0, w.alpha, MakeMeasured(1.0)).error().IsNotFound());
    CHECK(w.store->AddNode(MakeNode(999, 0, "x", "1"), std::nullopt).error().IsNotFound());
    CHECK(Must(w.store->IntegrityOk()));
  }
}

}  // namespace
}  // namespace kestrel
