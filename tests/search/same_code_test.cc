// Same code, no second timing: a node whose build has the code hash of a node
// already measured on this host is not measured; it gets a same_code edge to
// that node and its result. The engine on a real SQLite file with the
// FakeEvaluator, whose builds here ignore knob C (as a knob the code never
// reads would be): 24 configurations, 12 distinct codes.

#include <doctest.h>

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "engine_harness.h"
#include "fake_evaluator.h"
#include "search/engine/graph_loader.h"
#include "store/store.h"

using namespace kestrel;
using testing::FakeEvaluator;
using testing::Harness;
using testing::Must;
using testing::StopGuard;

namespace {

// The code of a configuration: A and B only.
std::string CodeOf(const KnobValues& knobs) { return "code-A" + knobs.at("A") + "-B" + knobs.at("B"); }

// copy -> twin, from the stored same_code edges.
std::map<std::int64_t, std::int64_t> SameCodeEdges(Harness& harness) {
  std::map<std::int64_t, std::int64_t> edges;
  for (const EdgeRecord& edge : Must(harness.store().LoadEdges(harness.Nodes().front().graph_id))) {
    if (edge.kind == EdgeKind::kSameCode) CHECK(edges.emplace(edge.parent, edge.child).second);
  }
  return edges;
}

int EventsOfKind(Harness& harness, const std::string& kind) {
  int count = 0;
  for (const auto& event : Must(harness.store().RunEvents(harness.last_run()))) count += event.kind == kind;
  return count;
}

RunConfig SerialConfig() {
  RunConfig config = testing::Config();
  config.parallel.max_in_flight = 1;  // each node ends before the next starts: every twin is measured first
  return config;
}

}  // namespace

TEST_SUITE("same_code") {
  TEST_CASE("a node built to a measured node's code is not timed: a same_code edge, the twin's result, no evaluation") {
    StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator;
    evaluator.SetCodeHash(CodeOf);
    const RunSummary summary = Must(harness.Run(evaluator, SerialConfig()));
    CHECK(summary.stop_reason == StopKind::kExhausted);
    // Every configuration is a node, but only one per code was measured.
    const auto nodes = harness.Nodes();
    REQUIRE(nodes.size() == 24);
    testing::CheckAllFinal(nodes);
    CHECK(evaluator.Evaluations() == 12);
    CHECK(summary.evaluations == 12);
    CHECK(summary.same_code == 12);
    CHECK(harness.LastRun().evaluations == 12);
    CHECK(harness.MeasurementsOfRun(harness.last_run()) == 12);
    CHECK(harness.MeasurementsOfRun(harness.last_run(), "same_code") == 12);
    CHECK(EventsOfKind(harness, "same_code") == 12);
    for (const auto& event : Must(harness.store().RunEvents(harness.last_run()))) {
      if (event.kind == "stop") CHECK(nlohmann::json::parse(event.detail_json).at("same_code") == 12);
    }

    std::map<std::int64_t, NodeRecord> by_id;
    for (const NodeRecord& node : nodes) by_id[node.id] = node;
    const auto edges = SameCodeEdges(harness);
    REQUIRE(edges.size() == 12);
    std::set<std::string> timed_codes;
    const auto loaded = Must(LoadSearchGraph(harness.store(), nodes.front().graph_id));
    std::map<std::int64_t, std::int64_t> derived_from;  // child -> parent, derive edges
    for (const EdgeRecord& edge : Must(harness.store().LoadEdges(nodes.front().graph_id))) {
      if (edge.kind == EdgeKind::kDerive) derived_from.emplace(edge.child, edge.parent);
    }
    for (const auto& [copy, twin] : edges) {
      CAPTURE(copy);
      const NodeRecord& c = by_id.at(copy);
      const NodeRecord& t = by_id.at(twin);
      // Same code, another configuration (C differs), the twin's speedup and stored code hash.
      CHECK(CodeOf(c.knobs) == CodeOf(t.knobs));
      CHECK(c.knobs.at("C") != t.knobs.at("C"));
      CHECK(c.status == NodeStatus::kMeasured);
      REQUIRE(c.speedup.has_value());
      CHECK(*c.speedup == doctest::Approx(testing::FakeSpeedup(t.knobs)));
      CHECK(c.reason == "same code as node " + std::to_string(twin) + ": not timed");
      CHECK(Must(harness.store().CodeHash(copy)) == CodeOf(c.knobs));
      CHECK(evaluator.EvaluationsByIdentity().count(c.identity) == 0);
      CHECK(evaluator.EvaluationsByIdentity().at(t.identity) == 1);
      CHECK(edges.count(twin) == 0);  // a twin is a timed node, never a copy
      timed_codes.insert(CodeOf(t.knobs));
      const auto measurements = Must(harness.store().GetMeasurements(copy));
      REQUIRE(measurements.size() == 1);
      CHECK(measurements[0].purpose == "same_code");
      CHECK(measurements[0].measurement.shapes.size() == 1);
      // Lineage reaches the copy from the seed along derivations only (the
      // twin is on it only when the copy was derived from it).
      const auto lineage = loaded.graph.Lineage(copy);
      CHECK(lineage.back() == copy);
      CHECK(by_id.at(lineage.front()).mutation.rfind("seed", 0) == 0);
      for (std::size_t i = 1; i < lineage.size(); ++i) CHECK(derived_from.at(lineage[i]) == lineage[i - 1]);
    }
    CHECK(timed_codes.size() == 12);
    // Best ranks timed nodes only.
    BestQuery query;
    query.task = harness.task().name;
    for (const BestRow& row : Must(harness.store().Best(query))) CHECK(edges.count(row.node_id) == 0);
    REQUIRE(summary.best_node.has_value());
    CHECK(edges.count(*summary.best_node) == 0);
  }

  TEST_CASE("without code hashes every configuration is timed") {
    StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator;
    const RunSummary summary = Must(harness.Run(evaluator, SerialConfig()));
    CHECK(summary.evaluations == 24);
    CHECK(summary.same_code == 0);
    CHECK(SameCodeEdges(harness).empty());
  }

  TEST_CASE("a second run finds its twins among the first run's nodes") {
    StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator;
    evaluator.SetCodeHash(CodeOf);
    RunConfig first = SerialConfig();
    first.budget.evaluations = 5;
    Must(harness.Run(evaluator, first));
    const RunSummary second = Must(harness.Run(evaluator, SerialConfig()));
    CHECK(evaluator.Evaluations() == 12);
    CHECK(SameCodeEdges(harness).size() == 12);
    CHECK(harness.Nodes().size() == 24);
    CHECK(second.evaluations == 7);
  }

  TEST_CASE("the confirmation rounds never re-measure a copy nor make it the best") {
    StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator;
    evaluator.SetCodeHash(CodeOf);
    RunConfig config = SerialConfig();
    config.confirm.rounds = 2;
    config.confirm.top = 3;
    const RunSummary summary = Must(harness.Run(evaluator, config));
    const auto edges = SameCodeEdges(harness);
    CHECK(edges.size() == 12);
    int confirmed_nodes = 0;
    for (const NodeRecord& node : harness.Nodes()) {
      int confirms = 0;
      for (const auto& record : Must(harness.store().GetMeasurements(node.id))) confirms += record.purpose == "confirm";
      if (edges.count(node.id) != 0) CHECK(confirms == 0);
      confirmed_nodes += confirms > 0;
    }
    CHECK(confirmed_nodes >= 3);  // the final round had three timed nodes to re-measure
    REQUIRE(summary.best_node.has_value());
    CHECK(edges.count(*summary.best_node) == 0);
  }

  TEST_CASE("a resumed run makes the same nodes and the same copies as an uninterrupted one") {
    for (const std::string strategy : {"random", "graph-ucb", "model", "portfolio"}) {
      CAPTURE(strategy);
      StopGuard guard;
      const auto outcome = [](Harness& harness) {
        std::vector<std::pair<std::string, bool>> out;  // identity, copied
        const auto edges = SameCodeEdges(harness);
        for (const NodeRecord& node : harness.Nodes()) out.emplace_back(node.identity, edges.count(node.id) != 0);
        return out;
      };
      RunConfig config = SerialConfig();
      config.strategy.name = strategy;
      config.seed = 11;
      config.budget.evaluations = 9;
      Harness whole;
      FakeEvaluator whole_evaluator;
      whole_evaluator.SetCodeHash(CodeOf);
      const RunSummary uninterrupted = Must(whole.Run(whole_evaluator, config));
      CHECK(uninterrupted.evaluations == 9);

      Harness split;
      FakeEvaluator split_evaluator;
      split_evaluator.SetCodeHash(CodeOf);
      RunConfig first = config;
      first.budget.evaluations = 4;
      const RunSummary before = Must(split.Run(split_evaluator, first));
      const RunSummary resumed = Must(split.Resume(split_evaluator, config));
      CHECK(before.evaluations == 4);
      CHECK(resumed.evaluations == 5);
      CHECK(before.same_code + resumed.same_code == uninterrupted.same_code);
      CHECK(outcome(split) == outcome(whole));
      CHECK(split_evaluator.Evaluations() == whole_evaluator.Evaluations());
    }
  }
}
