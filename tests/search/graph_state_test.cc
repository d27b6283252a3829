// GraphState, the one owner of the engine's nodes: every change is one
// store transaction (the node, its LLM calls, run events and the run's saved
// state) and only then a graph change; when the store refuses (here a
// trigger on a real SQLite file), neither the store nor the graph changes.

#include <doctest.h>

#include <map>
#include <string>

#include "search/engine/graph_state.h"
#include "tests/store/store_fixture.h"
#include "tests/testing.h"

using namespace kestrel;
using engine::ChangeNotes;
using engine::GraphState;
using testing::Must;

namespace {

struct Fixture {
  testing::TempDir dir;
  std::filesystem::path path = dir / "kestrel.db";
  std::unique_ptr<Store> store = Must(Store::Open(path));
  std::int64_t graph_id = 0;
  std::int64_t run_id = 0;
  std::int64_t host_id = 0;

  Fixture() {
    const auto task_id = Must(store->UpsertTask(testing::MakeTask("t")));
    graph_id = Must(store->GraphForTask(task_id, false));
    host_id = Must(store->UpsertHost(testing::MakeHost("h")));
    RunRecord run;
    run.task_id = task_id;
    run.graph_id = graph_id;
    run.host_id = host_id;
    run.config_json = "{}";
    run_id = Must(store->CreateRun(run));
  }
  NodeRecord Node(const std::string& source) const {
    return NewNodeRecord({source, {}, "c++", {"-O2"}}, graph_id, run_id, "m " + source);
  }
  ChangeNotes Notes(const std::string& state) const {
    ChangeNotes notes;
    LlmCallRecord call;
    call.provider = "openai";
    call.model = "m";
    call.prompt = "[]";
    call.response = "reply";
    notes.calls.push_back(call);
    notes.events.emplace_back("note", R"({"x":1})");
    notes.run_state = state;
    return notes;
  }
  void Exec(const std::string& sql) {
    const std::string error = testing::ExecSql(path, sql);
    REQUIRE_MESSAGE(error.empty(), error);
  }
  std::string SavedState() { return Must(store->GetRun(run_id)).state_json; }
  std::int64_t Count(const std::string& sql) { return testing::QueryInt(path, sql); }
};

}  // namespace

TEST_SUITE("search") {
  TEST_CASE("a child is stored with its edge, the parent's expansion, its calls, events and the run state at once") {
    Fixture f;
    GraphState state(*f.store, f.graph_id, f.run_id, f.host_id);
    CHECK(Must(state.Load()).empty());
    const NodeId seed = Must(state.AddSeed(f.Node("seed")));
    state.NoteSelection(seed);
    CHECK(state.graph().Node(seed).expansions == 1);  // in flight: the graph only
    CHECK(Must(f.store->GetNode(seed)).expansions == 0);
    const NodeId child = Must(state.AddChild(seed, f.Node("child"), EdgeKind::kDerive, true, f.Notes(R"({"selections":1})")));
    CHECK(Must(f.store->GetNode(seed)).expansions == 1);
    CHECK(state.graph().Node(seed).expansions == 1);
    CHECK(state.graph().Parents(child) == std::vector<NodeId>{seed});
    CHECK(f.Count("SELECT count(*) FROM llm_calls WHERE node_id = " + std::to_string(child)) == 1);
    CHECK(f.Count("SELECT count(*) FROM run_events WHERE kind = 'note'") == 1);
    CHECK(f.SavedState() == R"({"selections":1})");

    // A fresh load counts the expansions that ended, as stored.
    GraphState loaded(*f.store, f.graph_id, f.run_id, f.host_id);
    CHECK(Must(loaded.Load()) == std::vector<NodeId>{seed, child});
    CHECK(loaded.graph().Node(seed).expansions == 1);
    CHECK(loaded.CandidateOf(child).source == "child");
  }

  TEST_CASE("declines and duplicates end an expansion too; a fix does not count one") {
    Fixture f;
    GraphState state(*f.store, f.graph_id, f.run_id, f.host_id);
    (void)Must(state.Load());
    const NodeId seed = Must(state.AddSeed(f.Node("seed")));
    const NodeId child = Must(state.AddChild(seed, f.Node("child"), EdgeKind::kDerive, true, {}));
    Must(state.Decline(seed, true, f.Notes(R"({"selections":2})")));
    Must(state.AddDuplicate(seed, child, "again", true, f.Notes(R"({"selections":3})")));
    Must(state.AddDuplicate(seed, seed, "itself", true, {}));
    (void)Must(state.AddChild(child, f.Node("fixed"), EdgeKind::kFix, false, {}));
    Must(state.Decline(child, false, {}));
    CHECK(Must(f.store->GetNode(seed)).expansions == 4);
    CHECK(Must(f.store->GetNode(child)).expansions == 0);
    CHECK(f.Count("SELECT count(*) FROM edges WHERE parent_id = child_id") == 0);
    CHECK(f.Count("SELECT count(*) FROM run_events WHERE kind = 'duplicate'") == 2);
    CHECK(f.SavedState() == R"({"selections":3})");
    GraphState loaded(*f.store, f.graph_id, f.run_id, f.host_id);
    (void)Must(loaded.Load());
    CHECK(loaded.graph().Node(seed).expansions == 4);
  }

  TEST_CASE("when the store refuses a change, neither the store nor the graph changes") {
    Fixture f;
    GraphState state(*f.store, f.graph_id, f.run_id, f.host_id);
    (void)Must(state.Load());
    const NodeId seed = Must(state.AddSeed(f.Node("seed")));
    Must(f.store->SaveRunState(f.run_id, R"({"selections":0})"));

    SUBCASE("a child whose LLM call cannot be stored is not added") {
      f.Exec( "CREATE TRIGGER refuse BEFORE INSERT ON llm_calls BEGIN SELECT RAISE(ABORT, 'disk full'); END;");
      auto child = state.AddChild(seed, f.Node("child"), EdgeKind::kDerive, true, f.Notes(R"({"selections":1})"));
      REQUIRE_FALSE(child);
      CHECK(child.error().message().find("disk full") != std::string::npos);
      CHECK(f.Count("SELECT count(*) FROM nodes") == 1);
      CHECK(f.Count("SELECT count(*) FROM edges") == 0);
      CHECK(Must(f.store->GetNode(seed)).expansions == 0);
      CHECK(f.SavedState() == R"({"selections":0})");
      CHECK(state.graph().NodeCount() == 1);
      CHECK_FALSE(state.graph().FindByIdentity(f.Node("child").identity));
    }
    SUBCASE("a result whose run state cannot be saved leaves the node as it was") {
      const NodeId child = Must(state.AddChild(seed, f.Node("child"), EdgeKind::kDerive, true, {}));
      Must(state.SetBuilt(child));
      f.Exec(
                    "CREATE TRIGGER refuse BEFORE UPDATE OF state_json ON runs BEGIN SELECT RAISE(ABORT, 'read-only'); END;");
      const auto result = state.SetResult(child, testing::MakeMeasured(2.0), {}, f.Notes(R"({"selections":1})"));
      REQUIRE_FALSE(result);
      CHECK(f.Count("SELECT count(*) FROM measurements") == 0);
      CHECK(f.Count("SELECT count(*) FROM llm_calls") == 0);
      CHECK(Must(f.store->GetNode(child)).status == NodeStatus::kBuilt);
      CHECK(state.graph().Node(child).status == NodeStatus::kBuilt);
      CHECK_FALSE(state.graph().Node(child).speedup);
    }
    SUBCASE("a decline that cannot be stored counts no expansion") {
      f.Exec( "CREATE TRIGGER refuse BEFORE INSERT ON run_events BEGIN SELECT RAISE(ABORT, 'full'); END;");
      CHECK_FALSE(state.Decline(seed, true, f.Notes(R"({"selections":1})")));
      CHECK(Must(f.store->GetNode(seed)).expansions == 0);
      CHECK(f.SavedState() == R"({"selections":0})");
    }
  }

  TEST_CASE("a result and its confirmation round are stored together; the graph takes the medians") {
    Fixture f;
    GraphState state(*f.store, f.graph_id, f.run_id, f.host_id);
    (void)Must(state.Load());
    const NodeId a = Must(state.AddSeed(f.Node("a")));
    const NodeId b = Must(state.AddSeed(f.Node("b")));
    Must(state.SetResult(a, testing::MakeMeasured(2.0), {}, {}));
    engine::ConfirmationRound round;
    round.measurements = {{b, testing::MakeMeasured(3.0)}, {a, testing::MakeMeasured(2.2)},
                          {b, testing::MakeMeasured(3.4)}};
    Must(state.SetResult(b, testing::MakeMeasured(4.0), round, {}));
    CHECK(state.graph().Node(b).speedup.value() == doctest::Approx(3.4));  // median of 3.0, 3.4, 4.0
    CHECK(state.graph().Node(a).speedup.value() == doctest::Approx(2.1));
    CHECK(f.Count("SELECT count(*) FROM measurements WHERE purpose = 'confirm'") == 3);
  }

  TEST_CASE("a loaded graph reads a stored node's candidate, mutation and identity from the store when asked") {
    Fixture f;
    NodeId seed = 0, knobbed = 0, failed = 0, pending = 0;
    const std::string knob_source = "// kestrel:knob T 1 2 4\nint k;";
    {
      GraphState first(*f.store, f.graph_id, f.run_id, f.host_id);
      REQUIRE(Must(first.Load()).empty());
      seed = Must(first.AddSeed(f.Node("seed")));
      NodeRecord with_knobs = NewNodeRecord({knob_source, {{"T", "4"}}, "c++", {"-O2"}}, f.graph_id, f.run_id, "knob T 2->4");
      knobbed = Must(first.AddChild(seed, with_knobs, EdgeKind::kDerive, true, {}));
      failed = Must(first.AddChild(seed, NewNodeRecord({knob_source, {{"T", "2"}}, "c++", {"-O2"}}, f.graph_id, f.run_id,
                                                       "knob T 1->2"),
                                   EdgeKind::kDerive, true, {}));
      pending = Must(first.AddChild(knobbed, f.Node("fix"), EdgeKind::kFix, false, {}));
      Measurement measured;
      measured.outcome = Outcome::kMeasured;
      measured.speedup = 2.5;
      REQUIRE(first.SetResult(knobbed, measured, {}, {}));
      Measurement crashed;
      crashed.outcome = Outcome::kCrashed;
      REQUIRE(first.SetResult(failed, crashed, {}, {}));
    }
    GraphState state(*f.store, f.graph_id, f.run_id, f.host_id);
    std::vector<std::pair<NodeId, std::optional<double>>> told;
    const auto unfinished = Must(state.Load([&](const GraphState::StoredResult& node) {
      CHECK(**node.source == knob_source);
      told.emplace_back(node.node, node.speedup);
    }));
    CHECK(unfinished == std::vector<NodeId>{seed, pending});
    // Only final nodes with knobs reach the advisor, with their result.
    CHECK(told == std::vector<std::pair<NodeId, std::optional<double>>>{{knobbed, 2.5}, {failed, std::nullopt}});
    const GraphNode& node = state.graph().Node(knobbed);
    CHECK(node.status == NodeStatus::kMeasured);
    CHECK(node.speedup == 2.5);
    CHECK(state.graph().Parents(pending) == std::vector<NodeId>{knobbed});
    const Candidate candidate = state.CandidateOf(knobbed);
    CHECK(candidate.source == knob_source);
    CHECK(candidate.knobs == KnobValues{{"T", "4"}});
    CHECK(candidate.flags == std::vector<std::string>{"-O2"});
    CHECK(state.MutationOf(knobbed) == "knob T 2->4");
    CHECK(state.MutationOf(seed) == "m seed");
    // Knob variants share one source string.
    CHECK(state.SharedSourceOf(knobbed).get() == state.SharedSourceOf(failed).get());
    CHECK(Must(state.FindByIdentity(candidate.Identity())) == knobbed);
    CHECK(!Must(state.FindByIdentity(Candidate{"other", {}, "c++", {"-O2"}}.Identity())));
    // A node added after the load is found too.
    const NodeRecord later = f.Node("later");
    const NodeId added = Must(state.AddChild(knobbed, later, EdgeKind::kDerive, true, {}));
    CHECK(Must(state.FindByIdentity(later.identity)) == added);
  }

  TEST_CASE("a large graph is built as the store reads it, on a thread of its own: the graph the store holds") {
    // More nodes than the store hands over at once (runs of 16384) and than
    // a thread is started for: the graph is built from several runs.
    Fixture f;
    constexpr int kNodes = 20000;
    std::vector<NodeId> ids, unfinished;
    REQUIRE(f.store->Atomically([&]() -> Status {
      for (int i = 0; i < kNodes; ++i) {
        std::optional<EdgeRecord> edge;
        if (!ids.empty()) edge = EdgeRecord{ids[static_cast<std::size_t>(i * 7919) % ids.size()], 0, EdgeKind::kDerive, f.run_id, "m", 0};
        auto id = f.store->AddNode(f.Node("n" + std::to_string(i)), edge);
        if (!id) return Fail(id.error());
        ids.push_back(*id);
        const NodeStatus status = i % 3 == 0 ? NodeStatus::kBuildFailed : i % 3 == 1 ? NodeStatus::kProposed : NodeStatus::kBuilt;
        if (status != NodeStatus::kProposed) {
          if (auto done = f.store->SetNodeStatus(*id, status, "", ""); !done) return done;
        }
        if (!IsFinal(status)) unfinished.push_back(*id);
        if (i % 5 == 0) {
          if (auto done = f.store->AddExpansion(*id); !done) return done;
        }
      }
      return {};
    }));
    GraphState state(*f.store, f.graph_id, f.run_id, f.host_id);
    CHECK(Must(state.Load()) == unfinished);
    const SearchGraph& graph = state.graph();
    const auto stored = Must(f.store->LoadNodes(f.graph_id));
    REQUIRE(graph.Nodes() == ids);
    for (const NodeRecord& node : stored) {
      CAPTURE(node.id);
      CHECK(graph.Node(node.id).status == node.status);
      CHECK(graph.Node(node.id).expansions == node.expansions);
      CHECK(graph.Node(node.id).run_id == node.run_id);
    }
    CHECK(graph.EdgeCount() == static_cast<std::size_t>(kNodes - 1));
    for (const EdgeRecord& edge : Must(f.store->LoadEdges(f.graph_id))) {
      CHECK(graph.FirstParent(edge.child) == edge.parent);
    }
  }
}
