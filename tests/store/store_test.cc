// Store round trips on a real SQLite file: write, close, reopen, compare.
#include <doctest.h>

#include <nlohmann/json.hpp>

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

void CheckSameShapes(const std::vector<ShapeTiming>& got, const std::vector<ShapeTiming>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i].shape == want[i].shape);
    CHECK(got[i].candidate_seconds == want[i].candidate_seconds);  // exact: doubles round-trip
    CHECK(got[i].reference_seconds == want[i].reference_seconds);
    for (auto [g, w] : {std::pair{got[i].candidate, want[i].candidate}, std::pair{got[i].reference, want[i].reference}}) {
      CHECK(g.median == w.median);
      CHECK(g.p10 == w.p10);
      CHECK(g.p90 == w.p90);
      CHECK(g.spread == w.spread);
      CHECK(g.count == w.count);
    }
    CHECK(got[i].speedup == want[i].speedup);
    CHECK(got[i].gflops == want[i].gflops);
    CHECK(got[i].gbps == want[i].gbps);
  }
}

void CheckSameMeasurement(const Measurement& got, const Measurement& want) {
  CHECK(got.outcome == want.outcome);
  CHECK(got.reason == want.reason);
  CHECK(got.log == want.log);
  CHECK(got.speedup == want.speedup);
  CHECK(got.build_seconds == want.build_seconds);
  CHECK(got.eval_seconds == want.eval_seconds);
  CHECK(got.input_sets == want.input_sets);
  CHECK(got.seed == want.seed);
  CHECK(got.roofline_fraction == want.roofline_fraction);
  CHECK(got.baseline_speedup == want.baseline_speedup);
  REQUIRE(got.mismatches.size() == want.mismatches.size());
  for (std::size_t i = 0; i < got.mismatches.size(); ++i) {
    CHECK(got.mismatches[i].shape_index == want.mismatches[i].shape_index);
    CHECK(got.mismatches[i].input_set == want.mismatches[i].input_set);
    CHECK(got.mismatches[i].arg == want.mismatches[i].arg);
    CHECK(got.mismatches[i].index == want.mismatches[i].index);
    CHECK(got.mismatches[i].expected == want.mismatches[i].expected);
    CHECK(got.mismatches[i].actual == want.mismatches[i].actual);
  }
  CheckSameShapes(got.shapes, want.shapes);
}

TEST_SUITE("store") {
  TEST_CASE("everything written survives close and reopen") {
    testing::TempDir dir;
    const auto path = dir / "kestrel.db";
    const HostInfo host_info = MakeHost("alpha");
    NodeRecord seed = MakeNode(0, 0, "void f() {}\n", "1");
    NodeRecord child = MakeNode(0, 0, "void f() {}\n", "2");
    const Measurement measured = [] {
      Measurement m = MakeMeasured(1.75);
      m.roofline_fraction = 0.25;
      m.baseline_speedup = 4.5;  // the task's expert baseline over the reference
      return m;
    }();
    const Measurement wrong = MakeWrong();
    std::int64_t task = 0, graph = 0, host = 0, run = 0, measured_id = 0, wrong_id = 0;
    {
      auto store = Must(Store::Open(path));
      CHECK(store->SchemaVersion() == kSchemaVersion);
      task = Must(store->UpsertTask(MakeTask("softmax")));
      graph = Must(store->GraphForTask(task, false));
      host = Must(store->UpsertHost(host_info));
      RunRecord record;
      record.task_id = task;
      record.graph_id = graph;
      record.host_id = host;
      record.config_json = R"({"task": "softmax", "max_evals": 10})";
      record.started_at = 1000;
      run = Must(store->CreateRun(record));
      seed.graph_id = child.graph_id = graph;
      seed.run_id = child.run_id = run;
      seed.id = Must(store->AddNode(seed, std::nullopt));
      EdgeRecord edge{seed.id, 0, EdgeKind::kDerive, run, "knob KNOB 1->2", 0};
      child.id = Must(store->AddNode(child, edge));
      measured_id = Must(store->RecordMeasurement(seed.id, run, host, measured));
      Must(store->SetNodeStatus(child.id, NodeStatus::kBuilt, "", ""));
      wrong_id = Must(store->RecordMeasurement(child.id, run, host, wrong));
    }
    auto store = Must(Store::Open(path));
    SUBCASE("run") {
      const RunRecord got = Must(store->GetRun(run));
      CHECK(got.id == run);
      CHECK(got.task_id == task);
      CHECK(got.task_name == "softmax");
      CHECK(got.graph_id == graph);
      CHECK(got.host_id == host);
      CHECK(got.config_json == R"({"task": "softmax", "max_evals": 10})");
      CHECK(got.status == RunStatus::kRunning);
      CHECK(got.stop_reason == "");
      CHECK(got.started_at == 1000);
      CHECK(got.finished_at == 0);
      CHECK(got.evaluations == 2);
      REQUIRE(got.best_speedup);
      CHECK(*got.best_speedup == 1.75);
    }
    SUBCASE("host") {
      const auto hosts = Must(store->ListHosts());
      REQUIRE(hosts.size() == 1);
      const HostInfo& got = hosts[0].info;
      CHECK(hosts[0].id == host);
      CHECK(got.name == host_info.name);
      CHECK(got.cpu_model == host_info.cpu_model);
      CHECK(got.cores == host_info.cores);
      CHECK(got.isa == host_info.isa);
      CHECK(got.l1d_bytes == host_info.l1d_bytes);
      CHECK(got.l2_bytes == host_info.l2_bytes);
      CHECK(got.l3_bytes == host_info.l3_bytes);
      CHECK(got.memory_bytes == host_info.memory_bytes);
      CHECK(got.os == host_info.os);
      CHECK(Must(store->UpsertHost(host_info)) == host);  // same key, same row
    }
    SUBCASE("nodes") {
      const NodeRecord got = Must(store->GetNode(seed.id));
      CHECK(got.id == seed.id);
      CHECK(got.graph_id == graph);
      CHECK(got.run_id == run);
      CHECK(got.identity == seed.identity);
      CHECK(got.source == seed.source);
      CHECK(got.source_hash.size() == 64);
      CHECK(got.knobs == seed.knobs);
      CHECK(got.toolchain == seed.toolchain);
      CHECK(got.flags == seed.flags);
      CHECK(got.mutation == seed.mutation);
      CHECK(got.status == NodeStatus::kMeasured);
      CHECK(got.reason == measured.reason);
      CHECK(got.log == measured.log);
      REQUIRE(got.speedup);
      CHECK(*got.speedup == 1.75);
      CHECK(got.created_at > 0);
      CHECK(got.updated_at >= got.created_at);
      CHECK(got.ToCandidate().Identity() == seed.identity);

      const auto all = Must(store->LoadNodes(graph));
      REQUIRE(all.size() == 2);
      CHECK(all[0].id == seed.id);
      CHECK(all[1].id == child.id);
      CHECK(all[0].source.empty());  // LoadNodes leaves the text out
      CHECK(all[1].source_hash == got.source_hash);
      CHECK(all[1].status == NodeStatus::kWrong);
      CHECK(all[1].reason == wrong.reason);
      CHECK(all[1].log == wrong.log);
      CHECK_FALSE(all[1].speedup);
      CHECK(Must(store->GetSource(got.source_hash)) == seed.source);
      CHECK(Must(store->FindNode(graph, child.identity)) == std::optional<std::int64_t>(child.id));
      CHECK_FALSE(Must(store->FindNode(graph, "no such identity")));
    }
    SUBCASE("edges") {
      const auto edges = Must(store->LoadEdges(graph));
      REQUIRE(edges.size() == 1);
      CHECK(edges[0].parent == seed.id);
      CHECK(edges[0].child == child.id);
      CHECK(edges[0].kind == EdgeKind::kDerive);
      CHECK(edges[0].run_id == run);
      CHECK(edges[0].mutation == "knob KNOB 1->2");
      CHECK(edges[0].created_at > 0);
      Must(store->AddEdge({child.id, seed.id, EdgeKind::kFix, run, "repair", 5}));
      Must(store->AddEdge({child.id, seed.id, EdgeKind::kFix, run, "repair", 5}));  // idempotent
      CHECK(Must(store->LoadEdges(graph)).size() == 2);
      CHECK(store->AddEdge({child.id, 999, EdgeKind::kFix, run, "", 0}).error().IsNotFound());
    }
    SUBCASE("measurements") {
      const auto seed_measurements = Must(store->GetMeasurements(seed.id));
      REQUIRE(seed_measurements.size() == 1);
      CHECK(seed_measurements[0].id == measured_id);
      CHECK(seed_measurements[0].node_id == seed.id);
      CHECK(seed_measurements[0].run_id == run);
      CHECK(seed_measurements[0].host_id == host);
      CHECK(seed_measurements[0].created_at > 0);
      CheckSameMeasurement(seed_measurements[0].measurement, measured);
      const auto child_measurements = Must(store->GetMeasurements(child.id));
      REQUIRE(child_measurements.size() == 1);
      CHECK(child_measurements[0].id == wrong_id);
      CheckSameMeasurement(child_measurements[0].measurement, wrong);
      CHECK(Must(store->GetMeasurements(12345)).empty());
    }
    CHECK(Must(store->IntegrityOk()));
  }

  TEST_CASE("an identity is unique per graph but not across graphs") {
    testing::TempDir dir;
    auto store = Must(Store::Open(dir / "kestrel.db"));
    const auto task = Must(store->UpsertTask(MakeTask("add")));
    const auto graph = Must(store->GraphForTask(task, false));
    CHECK(Must(store->GraphForTask(task, false)) == graph);  // runs share the newest graph
    const NodeRecord node = MakeNode(graph, 0, "int x;", "4");
    const auto first = Must(store->AddNode(node, std::nullopt));
    auto again = store->AddNode(node, std::nullopt);
    REQUIRE_FALSE(again);
    CHECK(again.error().IsInvalidArgument());
    CHECK(again.error().message().find("already in graph") != std::string::npos);
    CHECK(Must(store->LoadNodes(graph)).size() == 1);  // the failed insert left nothing

    const auto fresh = Must(store->GraphForTask(task, true));
    CHECK(fresh != graph);
    CHECK(Must(store->GraphForTask(task, false)) == fresh);
    NodeRecord copy = node;
    copy.graph_id = fresh;
    CHECK(Must(store->AddNode(copy, std::nullopt)) != first);
    CHECK(store->GraphForTask(777, false).error().IsNotFound());
  }

  TEST_CASE("a graph's brief holds what LoadNodes and LoadEdges hold of it, and nothing of another graph") {
    testing::TempDir dir;
    auto store = Must(Store::Open(dir / "kestrel.db"));
    const auto task = Must(store->UpsertTask(MakeTask("add")));
    const auto graph = Must(store->GraphForTask(task, false));
    const auto other = Must(store->GraphForTask(Must(store->UpsertTask(MakeTask("mul"))), false));
    // The two graphs' nodes interleave, so the brief's id range holds nodes
    // and edges of both; sources alternate, so the source index is exercised.
    std::vector<std::int64_t> mine, theirs;
    for (int i = 0; i < 12; ++i) {
      const std::string source = i % 3 == 0 ? "int a;" : "int b;";
      for (auto* ids : {&mine, &theirs}) {
        const auto g = ids == &mine ? graph : other;
        const std::optional<EdgeRecord> edge =
            ids->empty() ? std::nullopt
                         : std::optional(EdgeRecord{ids->at(static_cast<std::size_t>(i) / 2), 0,
                                                    i % 4 == 1 ? EdgeKind::kFix : EdgeKind::kDerive, 0, "m", 0});
        ids->push_back(Must(store->AddNode(MakeNode(g, 0, source, std::to_string(i)), edge)));
      }
    }
    REQUIRE(store->AddEdge({mine[7], mine[2], EdgeKind::kDuplicate, 0, "dup", 0}));
    REQUIRE(store->AddExpansion(mine[3]));
    REQUIRE(store->AddExpansion(mine[3]));
    REQUIRE(store->RecordMeasurement(mine[4], 0, Must(store->UpsertHost(MakeHost("h"))), MakeMeasured(3.5)));
    REQUIRE(store->SetNodeStatus(mine[5], NodeStatus::kBuilt, "", ""));

    const GraphBrief brief = Must(store->LoadGraphBrief(graph));
    const auto nodes = Must(store->LoadNodes(graph));
    REQUIRE(brief.nodes.size() == nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      CAPTURE(i);
      const NodeBrief& node = brief.nodes[i];
      CHECK(node.id == nodes[i].id);
      CHECK(node.run_id == nodes[i].run_id);
      CHECK(node.status == nodes[i].status);
      CHECK(node.speedup == nodes[i].speedup);
      CHECK(node.expansions == nodes[i].expansions);
      CHECK(brief.source_hashes.at(node.source) == nodes[i].source_hash);
      CHECK(nlohmann::json::parse(brief.KnobsOf(node)) == nlohmann::json(nodes[i].knobs));
    }
    CHECK(brief.source_hashes.size() == 2);
    CHECK(brief.nodes[3].expansions == 2);
    CHECK(brief.nodes[4].speedup == 3.5);
    const auto edges = Must(store->LoadEdges(graph));
    REQUIRE(brief.edges.size() == edges.size());
    for (std::size_t i = 0; i < edges.size(); ++i) {
      CAPTURE(i);
      CHECK(brief.edges[i].parent == edges[i].parent);
      CHECK(brief.edges[i].child == edges[i].child);
      CHECK(brief.edges[i].kind == edges[i].kind);
    }
    CHECK(brief.edges.back().kind == EdgeKind::kDuplicate);
    CHECK(Must(store->LoadGraphBrief(Must(store->GraphForTask(task, true)))).nodes.empty());

    SUBCASE("the nodes are handed over as they are read: each once, in id order") {
      std::vector<std::int64_t> handed;
      std::size_t expected = 0;
      const GraphBrief again = Must(store->LoadGraphBrief(graph, [&](const GraphBrief& run, std::size_t count) {
        for (const NodeBrief& node : run.nodes) {
          handed.push_back(node.id);
          CHECK(brief.KnobsOf(brief.nodes.at(handed.size() - 1)) == run.KnobsOf(node));
          CHECK(run.source_hashes.at(node.source) == brief.source_hashes.at(brief.nodes.at(handed.size() - 1).source));
        }
        expected = count;
      }));
      CHECK(handed == mine);
      CHECK(expected >= mine.size());
      CHECK(again.nodes.empty());  // handed over, not kept
      CHECK(again.edges.size() == brief.edges.size());
    }
  }

  TEST_CASE("sources are content-addressed") {
    testing::TempDir dir;
    const auto path = dir / "kestrel.db";
    auto store = Must(Store::Open(path));
    const std::string text = "// kestrel:knob B 1 2\nvoid f() {}\n";
    const auto hash = Must(store->PutSource(text));
    CHECK(Must(store->PutSource(text)) == hash);
    const auto graph = Must(store->GraphForTask(Must(store->UpsertTask(MakeTask("t"))), false));
    for (const char* knob : {"1", "2"}) Must(store->AddNode(MakeNode(graph, 0, text, knob), std::nullopt));
    NodeRecord by_hash = MakeNode(graph, 0, "", "3");  // names the stored text by hash alone
    by_hash.source_hash = hash;
    const auto id = Must(store->AddNode(by_hash, std::nullopt));
    CHECK(Must(store->GetNode(id)).source == text);
    CHECK(QueryInt(path, "SELECT count(*) FROM sources") == 1);
    CHECK(Must(store->PutSource("other")) != hash);
    CHECK(store->GetSource("0000").error().IsNotFound());
  }

  TEST_CASE("UpsertTask keeps one row per name and updates the spec") {
    testing::TempDir dir;
    const auto path = dir / "kestrel.db";
    auto store = Must(Store::Open(path));
    Task task = MakeTask("softmax");
    const auto id = Must(store->UpsertTask(task));
    task.spec_text = R"({"name": "softmax", "entry": "g"})";
    CHECK(Must(store->UpsertTask(task)) == id);
    CHECK(QueryInt(path, "SELECT count(*) FROM tasks") == 1);
    CHECK(QueryInt(path, "SELECT json_extract(spec_json, '$.entry') = 'g' FROM tasks") == 1);
    CHECK(store->UpsertTask(Task{}).error().IsInvalidArgument());
  }
}

}  // namespace
}  // namespace kestrel
