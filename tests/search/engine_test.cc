// The engine (search/engine/engine.h) on a real SQLite file, with the in-process
// FakeEvaluator: budgets, exhaustion, continuation of a task's graph, stop
// requests, re-queued work, failures and lineage.

#include <doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "engine_harness.h"
#include "fake_evaluator.h"
#include "search/engine/graph_loader.h"
#include "core/stop.h"
#include "search/strategies/strategy.h"
#include "tests/sqlite_peek.h"
#include "store/store.h"

using namespace kestrel;
using namespace std::chrono_literals;
using testing::FakeEvaluator;

namespace {

using testing::CheckAllFinal;
using testing::CheckEachEvaluatedOnce;
using testing::CheckUniqueIdentities;
using testing::Config;
using testing::Harness;
using testing::Must;
using testing::StopGuard;

// The `left` nodes a run left proposed or built are what the next run
// (without a time budget, `left` evaluations) evaluates, and then every
// node is final.
void EvaluatesLeftFirst(Harness& harness, FakeEvaluator& evaluator, RunConfig config, int left) {
  config.budget.time.reset();
  config.budget.evaluations = left;
  const RunSummary next = Must(harness.Run(evaluator, config));
  CHECK(next.evaluations == left);
  CheckAllFinal(harness.Nodes());
}

}  // namespace

TEST_SUITE("engine") {
  TEST_CASE("--max-evals N records exactly N results, each identity once, and finishes with 'evaluations'") {
    StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator;
    RunConfig config = Config();
    config.budget.evaluations = 7;
    std::ostringstream progress;
    const RunSummary summary = Must(harness.Run(evaluator, config, &progress));
    CHECK(summary.run_id == harness.last_run());
    CHECK(summary.evaluations == 7);
    CHECK(summary.stop_reason == StopKind::kEvaluations);
    CHECK_FALSE(summary.interrupted);
    CHECK(evaluator.Evaluations() == 7);
    CheckEachEvaluatedOnce(evaluator);
    const auto nodes = harness.Nodes();
    CHECK(nodes.size() == 7);
    CheckUniqueIdentities(nodes);
    CheckAllFinal(nodes);
    CHECK(harness.MeasurementsOfRun(harness.last_run()) == 7);
    const RunRecord run = harness.LastRun();
    CHECK(run.status == RunStatus::kFinished);
    CHECK(run.stop_reason == "evaluations");
    CHECK(run.evaluations == 7);
    CHECK(run.finished_at > 0);
    // One progress line per result, and a line per new best.
    int result_lines = 0, best_lines = 0;
    std::istringstream text(progress.str());
    for (std::string line; std::getline(text, line);) {
      result_lines += line.rfind("[", 0) == 0;
      best_lines += line.find("new best") != std::string::npos;
    }
    CHECK(result_lines == 7);
    int best_events = 0;
    for (const auto& event : Must(harness.store().RunEvents(harness.last_run()))) best_events += event.kind == "new_best";
    CHECK(best_events >= 1);
    CHECK(best_lines == best_events);
  }

  TEST_CASE("without a budget the whole 24-configuration space is evaluated once and the optimum is best") {
    StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator;
    const RunSummary summary = Must(harness.Run(evaluator, Config()));
    CHECK(summary.stop_reason == StopKind::kExhausted);
    CHECK(summary.evaluations == 24);
    CHECK(summary.outcomes == std::map<std::string, std::int64_t>{{"measured", 24}});
    CHECK(evaluator.Evaluations() == 24);
    CheckEachEvaluatedOnce(evaluator);
    const auto nodes = harness.Nodes();
    REQUIRE(nodes.size() == 24);
    CheckUniqueIdentities(nodes);
    CheckAllFinal(nodes);
    std::set<KnobValues> configurations;
    for (const NodeRecord& node : nodes) configurations.insert(node.knobs);
    CHECK(configurations.size() == 24);
    // The stages kept to their limits.
    CHECK(evaluator.MaxConcurrentMeasures() == 1);
    CHECK(evaluator.MaxConcurrentBuilds() <= 2);

    const KnobValues optimum{{"A", "4"}, {"B", "2"}, {"C", "1"}};
    REQUIRE(summary.best_node.has_value());
    const NodeRecord best = Must(harness.store().GetNode(*summary.best_node));
    CHECK(best.knobs == optimum);
    CHECK(summary.best_speedup == doctest::Approx(testing::FakeSpeedup(optimum)));
    BestQuery query;
    query.task = harness.task().name;
    const auto rows = Must(harness.store().Best(query));
    REQUIRE_FALSE(rows.empty());
    CHECK(rows[0].node_id == best.id);
    CHECK(harness.LastRun().status == RunStatus::kFinished);
    CHECK(harness.LastRun().stop_reason == "exhausted");
  }

  TEST_CASE("a resumed run continues the random stream and strategy state exactly") {
    // One candidate in flight at a time makes a run deterministic, so a run
    // stopped after 5 evaluations and resumed to 14 must make the same
    // candidates, in the same order, as one uninterrupted run of 14.
    for (const std::string strategy : {"random", "graph-ucb", "model", "portfolio", "islands", "beam", "greedy"}) {
      CAPTURE(strategy);
      const auto identities = [](Harness& harness) {
        std::vector<std::string> out;
        for (const NodeRecord& node : harness.Nodes()) out.push_back(node.identity);
        return out;
      };
      RunConfig config = Config();
      config.strategy.name = strategy;
      config.parallel.max_in_flight = 1;
      config.seed = 11;
      config.budget.evaluations = 14;
      Harness whole;
      FakeEvaluator whole_evaluator;
      Must(whole.Run(whole_evaluator, config));

      Harness split;
      FakeEvaluator split_evaluator;
      RunConfig first = config;
      first.budget.evaluations = 5;
      Must(split.Run(split_evaluator, first));
      CHECK(split.LastRun().state_json.find("\"selections\"") != std::string::npos);
      // The parts of the strategy's state that grow with the graph are in
      // its journal, not in the state saved with every result.
      if (strategy == "islands") {
        CHECK(split.LastRun().state_json.find("\"home\"") == std::string::npos);
        const auto journal = Must(split.store().StrategyJournal(split.LastRun().id));
        REQUIRE_FALSE(journal.empty());
        CHECK(journal.front().find("\"home\"") != std::string::npos);
      }
      CHECK(split.LastRun().state_json.find("\"exhausted\"") == std::string::npos);
      const RunSummary resumed = Must(split.Resume(split_evaluator, config));
      CHECK(resumed.evaluations == 9);
      CHECK(identities(split) == identities(whole));

      // A state saved whole, as before the strategy's journal (schema v10),
      // resumes as exactly.
      Harness legacy;
      FakeEvaluator legacy_evaluator;
      Must(legacy.Run(legacy_evaluator, first));
      {
        nlohmann::json state = nlohmann::json::parse(legacy.LastRun().state_json);
        auto strategy = Must(MakeStrategy(config.strategy));
        REQUIRE(strategy->RestoreState(state.at("strategy")).has_value());
        for (const std::string& row : Must(legacy.store().StrategyJournal(legacy.last_run()))) {
          REQUIRE(strategy->Replay(nlohmann::json::parse(row)).has_value());
        }
        state["strategy"] = strategy->SaveState();
        REQUIRE(legacy.store().SaveRunState(legacy.last_run(), state.dump()).has_value());
        CHECK(testing::ExecSql(legacy.db_path(), "DELETE FROM strategy_journal").empty());
      }
      Must(legacy.Resume(legacy_evaluator, config));
      CHECK(identities(legacy) == identities(whole));

      // With the journal compacted after every third row (a snapshot row in
      // their place), before and after the resume.
      Harness compacted;
      compacted.journal_compact_rows = 3;
      FakeEvaluator compacted_evaluator;
      Must(compacted.Run(compacted_evaluator, first));
      CHECK(Must(compacted.store().StrategyJournal(compacted.last_run())).size() <= 3);
      Must(compacted.Resume(compacted_evaluator, config));
      CHECK(identities(compacted) == identities(whole));
      CHECK(Must(compacted.store().StrategyJournal(compacted.last_run())).size() <= 3);

      // Without the saved state the stream restarts and the run goes elsewhere.
      Harness restarted;
      FakeEvaluator restarted_evaluator;
      Must(restarted.Run(restarted_evaluator, first));
      Must(restarted.Resume(restarted_evaluator, config, false));
      if (strategy == "random") CHECK(identities(restarted) != identities(whole));
    }
  }

  TEST_CASE("a second run continues the same graph: no new seed, nothing evaluated twice") {
    StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator;
    RunConfig config = Config();
    SUBCASE("after a partial first run, the second completes the space") {
      config.budget.evaluations = 10;
      const RunSummary first = Must(harness.Run(evaluator, config));
      CHECK(first.evaluations == 10);
      const std::int64_t first_run = harness.last_run();
      config.budget.evaluations.reset();
      const RunSummary second = Must(harness.Run(evaluator, config));
      CHECK(second.evaluations == 14);
      CHECK(second.stop_reason == StopKind::kExhausted);
      CHECK(harness.MeasurementsOfRun(first_run) == 10);
      CHECK(harness.MeasurementsOfRun(harness.last_run()) == 14);
    }
    SUBCASE("after an exhaustive first run, the second finds nothing new") {
      Must(harness.Run(evaluator, config));
      const RunSummary second = Must(harness.Run(evaluator, config));
      CHECK(second.evaluations == 0);
      CHECK(second.stop_reason == StopKind::kExhausted);
      // The second run still reports the graph's best node.
      REQUIRE(second.best_node.has_value());
      CHECK(Must(harness.store().GetNode(*second.best_node)).knobs == KnobValues{{"A", "4"}, {"B", "2"}, {"C", "1"}});
      CHECK(harness.LastRun().status == RunStatus::kFinished);
    }
    CHECK(evaluator.Evaluations() == 24);
    CheckEachEvaluatedOnce(evaluator);
    const auto nodes = harness.Nodes();
    CHECK(nodes.size() == 24);
    CheckUniqueIdentities(nodes);
    int seeds = 0;
    for (const NodeRecord& node : nodes) seeds += node.mutation.rfind("seed:", 0) == 0;
    CHECK(seeds == 1);
  }

  TEST_CASE("a plateau stops the run with 'plateau'") {
    StopGuard guard;
    Harness harness;
    // Every configuration equally fast: the first result is the only new best.
    FakeEvaluator evaluator([](const KnobValues&) { return 1.25; });
    RunConfig config = Config();
    config.budget.plateau = 3;
    const RunSummary summary = Must(harness.Run(evaluator, config));
    CHECK(summary.stop_reason == StopKind::kPlateau);
    CHECK(summary.evaluations >= 4);
    CHECK(summary.evaluations <= 4 + config.parallel.InFlight());
    CHECK(summary.evaluations < 24);
    CHECK(harness.LastRun().status == RunStatus::kFinished);
    CHECK(harness.LastRun().stop_reason == "plateau");
    CheckAllFinal(harness.Nodes());
  }

  TEST_CASE("a time budget stops the run with 'time'") {
    StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator(testing::FakeSpeedup, [](const KnobValues&) { return Outcome::kMeasured; }, 60ms);
    RunConfig config = Config();
    config.budget.time = Seconds(0.4);
    const auto start = std::chrono::steady_clock::now();
    const RunSummary summary = Must(harness.Run(evaluator, config));
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(summary.stop_reason == StopKind::kTime);
    CHECK(summary.evaluations >= 1);
    CHECK(summary.evaluations < 24);
    CHECK(summary.seconds >= 0.4);
    // In-flight work (a few 60 ms measurements) finishes; nothing waits much longer.
    CHECK(elapsed < 2.0);
    CHECK(harness.LastRun().status == RunStatus::kFinished);
    CHECK(harness.LastRun().stop_reason == "time");
    CHECK(harness.MeasurementsOfRun(harness.last_run()) == summary.evaluations);
    // Out of time, a built candidate is not measured: it stays `built`, and
    // the next run measures it before anything new.
    int left_built = 0;
    for (const NodeRecord& node : harness.Nodes()) {
      CHECK((IsFinal(node.status) || node.status == NodeStatus::kBuilt));
      left_built += node.status == NodeStatus::kBuilt ? 1 : 0;
    }
    if (left_built > 0) EvaluatesLeftFirst(harness, evaluator, config, left_built);
  }

  TEST_CASE("out of time, built candidates waiting for the measure slot are left built, not measured") {
    StopGuard guard;
    Harness harness;
    // One slot, 300 ms a measurement, six candidates in flight: a queue of
    // built candidates forms behind the slot.
    FakeEvaluator evaluator(testing::FakeSpeedup, [](const KnobValues&) { return Outcome::kMeasured; }, 300ms);
    RunConfig config = Config();
    config.parallel.max_in_flight = 6;
    config.budget.time = Seconds(0.5);
    const RunSummary summary = Must(harness.Run(evaluator, config));
    CHECK(summary.stop_reason == StopKind::kTime);
    // Measurements one at a time from the session's start: at most two start
    // within 0.5 s (a slow machine starts fewer), none after it.
    CHECK(evaluator.Evaluations() >= 1);
    CHECK(evaluator.Evaluations() <= 2);
    CHECK(summary.evaluations == evaluator.Evaluations());
    CHECK(summary.search_seconds >= 0.5);
    CHECK(summary.search_seconds <= summary.seconds);
    int left_built = 0;
    for (const NodeRecord& node : harness.Nodes()) left_built += node.status == NodeStatus::kBuilt ? 1 : 0;
    CHECK(left_built >= 1);
    EvaluatesLeftFirst(harness, evaluator, config, left_built);
  }

  TEST_CASE("at a stop, a candidate whose job the evaluator withdrew from a queue is left built, and measured next run") {
    StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator(testing::FakeSpeedup, [](const KnobValues&) { return Outcome::kMeasured; }, 40ms);
    evaluator.WithdrawAtStop();
    RunConfig config = Config();
    config.parallel.max_in_flight = 4;
    std::atomic<bool> done{false};
    std::thread stopper([&] {
      while (!done && evaluator.Evaluations() < 3) std::this_thread::sleep_for(2ms);
      RequestStop();
    });
    auto summary = harness.Run(evaluator, config);
    done = true;
    stopper.join();
    REQUIRE_MESSAGE(summary.has_value(), testing::ErrorOf(summary));
    CHECK(summary->interrupted);
    CHECK(summary->evaluations == evaluator.Evaluations());
    CHECK(harness.MeasurementsOfRun(harness.last_run()) == summary->evaluations);
    // The candidates queued behind the slot (built) or the compiler
    // (proposed) at the stop: no verdict stored.
    int left = 0;
    for (const NodeRecord& node : harness.Nodes()) {
      CHECK((IsFinal(node.status) || node.status == NodeStatus::kBuilt || node.status == NodeStatus::kProposed));
      if (!IsFinal(node.status)) {
        ++left;
        CHECK(harness.store().GetMeasurements(node.id)->empty());
      }
    }
    CHECK(left >= 1);
    ResetStop();
    EvaluatesLeftFirst(harness, evaluator, config, left);
  }

  TEST_CASE("RequestStop from another thread ends the run as interrupted, with everything in flight recorded") {
    StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator(testing::FakeSpeedup, [](const KnobValues&) { return Outcome::kMeasured; }, 40ms);
    std::atomic<bool> done{false};
    std::thread stopper([&] {
      while (!done && evaluator.Evaluations() < 3) std::this_thread::sleep_for(2ms);
      RequestStop();
    });
    auto summary = harness.Run(evaluator, Config());
    done = true;
    stopper.join();
    REQUIRE_MESSAGE(summary.has_value(), testing::ErrorOf(summary));
    CHECK(summary->stop_reason == StopKind::kSignal);
    CHECK(summary->interrupted);
    CHECK(summary->evaluations >= 3);
    CHECK(summary->evaluations < 24);
    CHECK(summary->evaluations == evaluator.Evaluations());
    const RunRecord run = harness.LastRun();
    CHECK(run.status == RunStatus::kInterrupted);
    CHECK(run.stop_reason == "signal");
    const auto nodes = harness.Nodes();
    CheckAllFinal(nodes);
    CHECK(static_cast<std::int64_t>(nodes.size()) == summary->evaluations);
    CHECK(harness.MeasurementsOfRun(harness.last_run()) == summary->evaluations);
  }

  TEST_CASE("nodes left proposed or built by an earlier run are evaluated by the next run") {
    StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator;
    RunConfig config = Config();
    config.budget.evaluations = 2;
    Must(harness.Run(evaluator, config));
    const std::int64_t first_run = harness.last_run();
    const auto before = harness.Nodes();
    REQUIRE(before.size() == 2);

    // Two nodes as a killed run would leave them: one proposed, one built
    // (two configurations the first run did not make).
    std::vector<std::int64_t> left;
    for (const KnobValues& knobs : {KnobValues{{"A", "4"}, {"B", "3"}, {"C", "1"}},
                                    KnobValues{{"A", "3"}, {"B", "3"}, {"C", "1"}},
                                    KnobValues{{"A", "4"}, {"B", "1"}, {"C", "1"}},
                                    KnobValues{{"A", "2"}, {"B", "2"}, {"C", "1"}}}) {
      const Candidate candidate = evaluator.CandidateFor(testing::kFakeSeed, knobs);
      if (left.size() == 2 || std::any_of(before.begin(), before.end(), [&candidate](const NodeRecord& node) {
            return node.identity == candidate.Identity();
          })) {
        continue;
      }
      NodeRecord record;
      record.graph_id = harness.graph_id();
      record.run_id = first_run;
      record.identity = candidate.Identity();
      record.source = candidate.source;
      record.knobs = knobs;
      record.toolchain = candidate.toolchain;
      record.flags = candidate.flags;
      record.mutation = "by hand";
      EdgeRecord edge{before[0].id, 0, EdgeKind::kDerive, first_run, "by hand", 0};
      left.push_back(Must(harness.store().AddNode(record, edge)));
    }
    REQUIRE(harness.store().SetNodeStatus(left[1], NodeStatus::kBuilt, "", "").has_value());

    config.budget.evaluations = 2;
    const RunSummary second = Must(harness.Run(evaluator, config));
    CHECK(second.evaluations == 2);
    for (std::int64_t id : left) {
      CAPTURE(id);
      const NodeRecord node = Must(harness.store().GetNode(id));
      CHECK(node.status == NodeStatus::kMeasured);
      REQUIRE(node.speedup.has_value());
      CHECK(*node.speedup == doctest::Approx(testing::FakeSpeedup(node.knobs)));
      const auto measurements = Must(harness.store().GetMeasurements(id));
      REQUIRE(measurements.size() == 1);
      CHECK(measurements[0].run_id == harness.last_run());
    }
    CHECK(harness.Nodes().size() == 4);
    CheckEachEvaluatedOnce(evaluator);
  }

  // A run's derived counts come from the results it recorded, not from the
  // nodes it proposed (a run that evaluates re-queued nodes counts them).
  TEST_CASE("a run's record counts the re-queued nodes it evaluated") {
    StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator;
    RunConfig config = Config();
    config.budget.evaluations = 1;
    Must(harness.Run(evaluator, config));
    const std::int64_t first_run = harness.last_run();
    const Candidate candidate = evaluator.CandidateFor(testing::kFakeSeed, {{"A", "4"}, {"B", "2"}, {"C", "1"}});
    NodeRecord record;
    record.graph_id = harness.graph_id();
    record.run_id = first_run;
    record.identity = candidate.Identity();
    record.source = candidate.source;
    record.knobs = candidate.knobs;
    record.toolchain = candidate.toolchain;
    record.flags = candidate.flags;
    record.mutation = "by hand";
    Must(harness.store().AddNode(record, EdgeRecord{harness.Nodes()[0].id, 0, EdgeKind::kDerive, first_run, "by hand", 0}));
    const RunSummary second = Must(harness.Run(evaluator, config));
    REQUIRE(second.evaluations == 1);
    CHECK(harness.LastRun().evaluations == second.evaluations);
    REQUIRE(harness.LastRun().best_speedup.has_value());
    CHECK(*harness.LastRun().best_speedup == doctest::Approx(second.best_speedup));
  }

  TEST_CASE("failed outcomes are recorded with their status and never ranked") {
    StopGuard guard;
    Harness harness;
    const testing::OutcomeFunction outcome = [](const KnobValues& knobs) {
      const int a = testing::KnobInt(knobs, "A"), b = testing::KnobInt(knobs, "B"), c = testing::KnobInt(knobs, "C");
      if (a == 2) return Outcome::kBuildFailed;
      if (a == 3 && b == 1) return Outcome::kWrong;
      if (b == 3 && c == 1) return Outcome::kCrashed;
      if (a == 4 && b == 2 && c == 0) return Outcome::kTimedOut;
      return Outcome::kMeasured;
    };
    FakeEvaluator evaluator(testing::FakeSpeedup, outcome);
    const RunSummary summary = Must(harness.Run(evaluator, Config()));
    CHECK(summary.stop_reason == StopKind::kExhausted);
    for (const char* name : {"measured", "build_failed", "wrong", "crashed", "timed_out"}) {
      CAPTURE(name);
      CHECK(summary.outcomes.count(name) == 1);
    }
    const auto nodes = harness.Nodes();
    std::set<std::int64_t> measured;
    for (const NodeRecord& node : nodes) {
      CAPTURE(node.id);
      CHECK(node.status == StatusOf(outcome(node.knobs)));
      if (node.status == NodeStatus::kMeasured) measured.insert(node.id);
      if (node.status != NodeStatus::kMeasured) {
        CHECK_FALSE(node.speedup.has_value());
        const auto measurements = Must(harness.store().GetMeasurements(node.id));
        REQUIRE(measurements.size() == 1);
        CHECK(measurements[0].measurement.outcome == outcome(node.knobs));
        CHECK_FALSE(measurements[0].measurement.reason.empty());
      }
    }
    BestQuery query;
    query.top = 0;
    std::set<std::int64_t> ranked;
    for (const BestRow& row : Must(harness.store().Best(query))) ranked.insert(row.node_id);
    CHECK(ranked == measured);
    REQUIRE(summary.best_node.has_value());
    CHECK(Must(harness.store().GetNode(*summary.best_node)).knobs == KnobValues{{"A", "4"}, {"B", "2"}, {"C", "1"}});
    CHECK(summary.outcomes.at("measured") == static_cast<std::int64_t>(measured.size()));
  }

  TEST_CASE("the lineage of the best node starts at the seed and moves one knob per step") {
    StopGuard guard;
    for (const char* strategy : {"graph-ucb", "greedy", "random"}) {
      CAPTURE(strategy);
      Harness harness;
      FakeEvaluator evaluator;
      RunConfig config = Config();
      config.strategy.name = strategy;
      const RunSummary summary = Must(harness.Run(evaluator, config));
      REQUIRE(summary.best_node.has_value());
      auto loaded = Must(LoadSearchGraph(harness.store(), harness.graph_id()));
      std::map<NodeId, const NodeRecord*> by_id;
      for (const NodeRecord& node : loaded.nodes) by_id[node.id] = &node;
      const auto lineage = loaded.graph.Lineage(*summary.best_node);
      REQUIRE(lineage.size() >= 2);
      CHECK(lineage.back() == *summary.best_node);
      CHECK(by_id.at(lineage.front())->mutation == "seed:seed.cpp");
      CHECK(by_id.at(lineage.front())->knobs == KnobValues{{"A", "1"}, {"B", "1"}, {"C", "0"}});
      for (std::size_t i = 1; i < lineage.size(); ++i) {
        const KnobValues& from = by_id.at(lineage[i - 1])->knobs;
        const KnobValues& to = by_id.at(lineage[i])->knobs;
        int differing = 0;
        for (const auto& [name, value] : from) differing += to.at(name) != value;
        CHECK(differing == 1);
        const auto parents = loaded.graph.Parents(lineage[i]);
        CHECK(std::find(parents.begin(), parents.end(), lineage[i - 1]) != parents.end());
      }
    }
  }
}
