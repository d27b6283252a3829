// A person in the loop of a real search (the Engine, a real SQLite file, the
// fake evaluator, a scripted LLM server on loopback): bans, pins, steers and
// notes, written through a second connection as `kestrel ban` and the
// others write them, are honoured without a restart.

#include <doctest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>

#include "search/engine_harness.h"
#include "search/mutators/reviewer.h"
#include "search/llm_search_script.h"
#include "tests/llm/scripted_server.h"

namespace kestrel {
namespace {

using testing::FakeEvaluator;
using testing::Harness;
using testing::Must;
using testing::Reply;
using testing::ScriptedServer;
using namespace llm_search;

// An action written by another connection, as the commands write it.
std::int64_t Act(Harness& harness, HumanActionKind kind, std::int64_t node, const std::string& text,
                 std::int64_t run = 0) {
  auto other = Must(Store::Open(harness.db_path()));
  return Must(other->AddHumanAction({0, harness.graph_id(), node, run, kind, text, "ada", 0}));
}

// The node's subtree along the edges that made children.
std::set<std::int64_t> Subtree(Harness& harness, std::int64_t root) {
  std::set<std::int64_t> subtree = {root};
  for (const EdgeRecord& edge : Must(harness.store().LoadEdges(harness.graph_id()))) {  // parents come first
    if (MadeChild(edge.kind) && subtree.contains(edge.parent)) subtree.insert(edge.child);
  }
  return subtree;
}

std::optional<EdgeRecord> MadeBy(Harness& harness, std::int64_t child) {
  for (const EdgeRecord& edge : Must(harness.store().LoadEdges(harness.graph_id()))) {
    if (edge.child == child && MadeChild(edge.kind)) return edge;
  }
  return std::nullopt;
}

RunConfig KnobSearch(std::int64_t evaluations) {
  RunConfig config = testing::Config();
  config.strategy.name = "greedy";  // always the fastest: the ban and the pin go against it
  config.parallel.max_in_flight = 1;
  config.budget.evaluations = evaluations;
  return config;
}

// A person who edits every plan and accepts every proposal, as the live
// page or the terminal would answer.
class PlanEditor final : public Reviewer {
 public:
  ReviewVerdict Review(const ReviewRequest& request) override {
    seen.push_back(request);
    if (request.purpose == "plan") return {ReviewVerdict::Kind::kEdit, "1. EDITED PLAN: keep it simple", "ada"};
    return {ReviewVerdict::Kind::kAccept, "", "ada"};
  }
  std::vector<ReviewRequest> seen;
};

TEST_SUITE("search") {
  TEST_CASE("a banned node's subtree is never expanded again") {
    testing::StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator;
    Must(harness.Run(evaluator, KnobSearch(6)));
    std::int64_t best = 0;  // the fastest: greedy expands it next
    double fastest = 0.0;
    for (const NodeRecord& node : harness.Nodes()) {
      if (node.speedup && *node.speedup > fastest) std::tie(best, fastest) = std::make_pair(node.id, *node.speedup);
    }
    REQUIRE(best != 0);
    Act(harness, HumanActionKind::kBan, best, "");
    const std::set<std::int64_t> banned = Subtree(harness, best);
    const std::int64_t before = harness.Nodes().back().id;
    Must(harness.Run(evaluator, KnobSearch(6)));
    int made = 0;
    for (const NodeRecord& node : harness.Nodes()) {
      if (node.id <= before) continue;
      const auto edge = MadeBy(harness, node.id);
      REQUIRE(edge);
      CAPTURE(node.id);
      CHECK_FALSE(banned.contains(edge->parent));
      ++made;
    }
    CHECK(made > 0);
  }

  TEST_CASE("a resumed run keeps what a ban exhausted, and gives it back when the ban is lifted") {
    testing::StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator;
    Must(harness.Run(evaluator, KnobSearch(6)));
    std::int64_t best = 0;  // greedy's first choice in the next run
    double fastest = 0.0;
    for (const NodeRecord& node : harness.Nodes()) {
      if (node.speedup && *node.speedup > fastest) std::tie(best, fastest) = std::make_pair(node.id, *node.speedup);
    }
    Act(harness, HumanActionKind::kBan, best, "");
    Must(harness.Run(evaluator, KnobSearch(1)));
    const auto saved = nlohmann::json::parse(harness.LastRun().state_json);
    // Greedy tried the banned node and any faster node under it.
    const std::set<std::int64_t> subtree = Subtree(harness, best);
    REQUIRE_FALSE(saved.at("ban_exhausted").empty());
    CHECK(saved.at("ban_exhausted")[0] == best);
    for (const auto& node : saved.at("ban_exhausted")) CHECK(subtree.contains(node.get<std::int64_t>()));
    CHECK(saved.at("human_seen").get<std::int64_t>() == Must(harness.store().LatestHumanAction(harness.graph_id())));
    // Lifted and pinned: the resumed run gives the node back to the strategy
    // (exhausted, the pin would pass it over) and expands it first.
    Act(harness, HumanActionKind::kUnban, best, "");
    Act(harness, HumanActionKind::kPin, best, "");
    const std::int64_t before = harness.Nodes().back().id;
    Must(harness.Resume(evaluator, KnobSearch(2)));
    const auto next = harness.Nodes().back();
    REQUIRE(next.id > before);
    const auto edge = MadeBy(harness, next.id);
    REQUIRE(edge);
    CHECK(edge->parent == best);
  }

  TEST_CASE("a pinned node is expanded next, before the strategy's choice, while it is pinned") {
    testing::StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator;
    Must(harness.Run(evaluator, KnobSearch(5)));
    const std::int64_t seed = SeedId(harness);  // the slowest: greedy would not pick it
    Act(harness, HumanActionKind::kPin, seed, "");
    const std::int64_t before = harness.Nodes().back().id;
    Must(harness.Run(evaluator, KnobSearch(2)));
    const auto nodes = harness.Nodes();
    int made = 0;
    for (const NodeRecord& node : nodes) {
      if (node.id <= before) continue;
      const auto edge = MadeBy(harness, node.id);
      REQUIRE(edge);
      CHECK(edge->parent == seed);
      ++made;
    }
    CHECK(made == 2);
  }

  TEST_CASE("a node a person adds while the run goes on is adopted and evaluated by that run") {
    testing::StopGuard guard;
    Harness harness;
    FakeEvaluator evaluator(testing::FakeSpeedup, [](const KnobValues&) { return Outcome::kMeasured; },
                            std::chrono::milliseconds(40));
    std::atomic<std::int64_t> added = 0;
    std::thread person([&] {
      // Once the run has measured a few nodes, as `kestrel add --parent` writes it.
      while (Count(harness, "SELECT count(*) FROM nodes WHERE status = 'measured'") < 3) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      auto other = Must(Store::Open(harness.db_path()));
      const std::int64_t seed = Must(other->LoadNodes(harness.graph_id())).front().id;
      const Candidate by_hand{std::string(testing::kFakeSeed) + "// by hand\n", {{"A", "3"}, {"B", "2"}, {"C", "1"}},
                              evaluator.Toolchain(), evaluator.Flags()};
      const Status stored = other->Atomically([&]() -> Status {
        auto id = other->AddNode(NewNodeRecord(by_hand, harness.graph_id(), 0, "human:ada:by_hand.cpp"),
                                 EdgeRecord{seed, 0, EdgeKind::kHuman, 0, "human:ada:by_hand.cpp", 0});
        if (!id) return Fail(id.error());
        added = *id;
        auto action = other->AddHumanAction({0, harness.graph_id(), *id, 0, HumanActionKind::kAdd, "by_hand.cpp", "ada", 0});
        return action ? Status{} : Fail(action.error());
      });
      CHECK(stored.has_value());
    });
    Must(harness.Run(evaluator, KnobSearch(10)));
    person.join();
    REQUIRE(added > 0);
    const NodeRecord node = Must(harness.store().GetNode(added));
    CHECK(node.status == NodeStatus::kMeasured);
    const auto measurements = Must(harness.store().GetMeasurements(added));
    REQUIRE(measurements.size() == 1);
    CHECK(measurements[0].run_id == harness.last_run());
    const auto edge = MadeBy(harness, added);
    REQUIRE(edge);
    CHECK(edge->kind == EdgeKind::kHuman);
  }

  TEST_CASE("a steer added mid-run reaches the next prompts; the notes of the parent's lineage reach them too") {
    testing::StopGuard guard;
    std::vector<Reply> script;
    for (int i = 0; i < 12; ++i) script.push_back(Reply(200, Reply200("```cpp\n" + Kernel("k" + std::to_string(i)) + "```\n"), {}, 0.3));
    ScriptedServer server(script);
    Harness harness;
    FakeEvaluator evaluator(Speedup, OutcomeOf);
    // Run 1 measures the seed only; a note on it, then run 2 asks the LLM.
    RunConfig seed_only = testing::Config();
    seed_only.budget.evaluations = 1;
    Must(harness.Run(evaluator, seed_only));
    Act(harness, HumanActionKind::kNote, SeedId(harness), "the tail loop must stay scalar");
    RunConfig config = SearchConfig(server);
    config.budget.evaluations = 6;
    std::atomic<bool> steered = false;
    std::thread steer([&] {
      while (server.seen().size() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      // The second request is being answered (0.3 s): the run is run 2.
      auto other = Must(Store::Open(harness.db_path()));
      const auto run = Must(other->ListRuns()).front().id;
      Must(other->AddHumanAction({0, harness.graph_id(), 0, run, HumanActionKind::kSteer, "use AVX-512", "ada", 0}));
      steered = true;
    });
    Must(harness.Run(evaluator, config));
    steer.join();
    REQUIRE(steered);
    const auto seen = server.seen();
    REQUIRE(seen.size() >= 4);
    const std::string block = "Instructions from the person running this search";
    CHECK(seen[0].body.find(block) == std::string::npos);
    CHECK(seen[1].body.find(block) == std::string::npos);
    for (std::size_t i = 2; i < seen.size(); ++i) {
      CAPTURE(i);
      CHECK(seen[i].body.find(block) != std::string::npos);
      CHECK(seen[i].body.find("use AVX-512") != std::string::npos);
    }
    // Every parent descends from the seed: its note is in every prompt.
    for (const auto& request : seen) CHECK(request.body.find("the tail loop must stay scalar") != std::string::npos);
  }

  TEST_CASE("a reviewer's edited plan is what the implementation prompt carries; its verdicts are stored with the node") {
    testing::StopGuard guard;
    ScriptedServer server({Reply(200, Reply200("1. unroll the loop by four")), Code("fast")});
    Harness harness;
    FakeEvaluator evaluator(Speedup, OutcomeOf);
    RunConfig config = SearchConfig(server);
    config.mutators[0].plan = true;
    config.budget.evaluations = 2;
    auto budget = std::make_shared<Budget>(config.budget);
    config.task = harness.task().name;
    auto reviewer = std::make_shared<PlanEditor>();
    // The harness's run, with the reviewer given to the mutators.
    const std::int64_t host_id = Must(harness.store().UpsertHost(evaluator.Host()));
    RunRecord run;
    run.task_id = Must(harness.store().UpsertTask(harness.task()));
    run.graph_id = harness.graph_id();
    run.host_id = host_id;
    run.config_json = ToJson(config).dump();
    const std::int64_t run_id = Must(harness.store().CreateRun(run));
    EngineOptions options;
    options.run_id = run_id;
    options.graph_id = harness.graph_id();
    options.host_id = host_id;
    options.budget = budget;
    Engine engine(harness.store(), harness.task(), evaluator, config,
                  Must(MakeMutators(config, harness.task(), evaluator.Host(), budget, reviewer)),
                  Must(MakeStrategy(config.strategy)), options);
    Must(engine.Run());
    const auto seen = server.seen();
    REQUIRE(seen.size() == 2);
    CHECK(seen[1].body.find("EDITED PLAN: keep it simple") != std::string::npos);
    CHECK(seen[1].body.find("unroll the loop by four") == std::string::npos);
    REQUIRE(reviewer->seen.size() == 2);
    CHECK(reviewer->seen[0].purpose == "plan");
    CHECK(reviewer->seen[0].text == "1. unroll the loop by four");
    CHECK(reviewer->seen[1].purpose == "mutate");
    const auto fast = NodeWithKnob(harness, "fast");
    REQUIRE(fast);
    const auto actions = Must(harness.store().NodeActions(fast->id));
    REQUIRE(actions.size() == 2);
    CHECK(actions[0].kind == HumanActionKind::kReviewEdit);
    CHECK(actions[0].run_id == run_id);
    CHECK(actions[0].author == "ada");
    CHECK(actions[1].kind == HumanActionKind::kReviewAccept);
    // The plan call keeps the model's plan as it came.
    const auto calls = Must(harness.store().LlmCallsForNode(fast->id, "plan"));
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].response == "1. unroll the loop by four");
  }
}

}  // namespace
}  // namespace kestrel
