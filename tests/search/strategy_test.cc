// The strategies (search/strategy.h): which node is expanded next.

#include <doctest.h>

#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>

#include "graph/search_graph.h"
#include "search/strategy.h"

using namespace kestrel;

namespace {

const char* const kNames[] = {"graph-ucb", "greedy", "random"};

std::unique_ptr<Strategy> Make(const std::string& name, double exploration = 1.0) {
  auto strategy = MakeStrategy(StrategyConfig{name, exploration});
  REQUIRE_MESSAGE(strategy.has_value(), strategy.error().message());
  return std::move(*strategy);
}

void Add(SearchGraph& graph, NodeId id, NodeStatus status, std::optional<double> speedup = std::nullopt,
         int expansions = 0) {
  GraphNode node;
  node.id = id;
  node.identity = "identity-" + std::to_string(id);
  node.label = "node " + std::to_string(id);
  graph.AddNode(node);
  graph.SetResult(id, status, speedup);
  for (int i = 0; i < expansions; ++i) graph.NoteExpansion(id);
}

// Measured 1 (1.0x), 4 (2.0x, to be marked exhausted), 6 (0.5x); the others
// are not measured (proposed, built, or failed).
SearchGraph MixedGraph() {
  SearchGraph graph;
  Add(graph, 1, NodeStatus::kMeasured, 1.0);
  Add(graph, 2, NodeStatus::kProposed);
  Add(graph, 3, NodeStatus::kWrong);
  Add(graph, 4, NodeStatus::kMeasured, 2.0);
  Add(graph, 5, NodeStatus::kBuilt);
  Add(graph, 6, NodeStatus::kMeasured, 0.5);
  Add(graph, 7, NodeStatus::kCrashed);
  Add(graph, 8, NodeStatus::kBuildFailed);
  Add(graph, 9, NodeStatus::kTimedOut);
  return graph;
}

}  // namespace

TEST_SUITE("strategy") {
  TEST_CASE("every strategy selects only measured nodes that are not exhausted") {
    const SearchGraph graph = MixedGraph();
    for (const char* name : kNames) {
      CAPTURE(name);
      for (double exploration : {0.0, 1.0, 50.0}) {
        CAPTURE(exploration);
        auto strategy = Make(name, exploration);
        strategy->MarkExhausted(4);
        CHECK(strategy->IsExhausted(4));
        CHECK_FALSE(strategy->IsExhausted(1));
        std::mt19937_64 rng(3);
        for (int i = 0; i < 200; ++i) {
          const auto chosen = strategy->Select(graph, rng);
          REQUIRE(chosen.has_value());
          CHECK((*chosen == 1 || *chosen == 6));
        }
      }
    }
  }

  TEST_CASE("nothing to select on an empty graph, an unmeasured one, or when all are exhausted") {
    for (const char* name : kNames) {
      CAPTURE(name);
      auto strategy = Make(name);
      std::mt19937_64 rng(1);
      SearchGraph empty;
      CHECK_FALSE(strategy->Select(empty, rng).has_value());

      SearchGraph unmeasured;
      Add(unmeasured, 1, NodeStatus::kProposed);
      Add(unmeasured, 2, NodeStatus::kWrong);
      CHECK_FALSE(strategy->Select(unmeasured, rng).has_value());

      SearchGraph graph = MixedGraph();
      for (NodeId id : {1, 4, 6}) strategy->MarkExhausted(id);
      CHECK_FALSE(strategy->Select(graph, rng).has_value());
    }
  }

  TEST_CASE("greedy picks the fastest, then the next fastest once that is exhausted") {
    SearchGraph graph = MixedGraph();
    auto strategy = Make("greedy");
    std::mt19937_64 rng(1);
    CHECK(strategy->Select(graph, rng) == NodeId{4});
    strategy->MarkExhausted(4);
    CHECK(strategy->Select(graph, rng) == NodeId{1});
    strategy->MarkExhausted(1);
    CHECK(strategy->Select(graph, rng) == NodeId{6});
  }

  TEST_CASE("graph-ucb with exploration 0 picks the fastest, however often it was expanded") {
    SearchGraph graph;
    Add(graph, 1, NodeStatus::kMeasured, 1.9, 0);
    Add(graph, 2, NodeStatus::kMeasured, 2.0, 25);
    Add(graph, 3, NodeStatus::kMeasured, 0.7, 0);
    auto strategy = Make("graph-ucb", 0.0);
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
      std::mt19937_64 rng(seed);
      CHECK(strategy->Select(graph, rng) == NodeId{2});
    }
  }

  TEST_CASE("graph-ucb with a large exploration prefers a rarely expanded node") {
    SearchGraph graph;
    Add(graph, 1, NodeStatus::kMeasured, 2.0, 12);
    Add(graph, 2, NodeStatus::kMeasured, 1.5, 0);
    Add(graph, 3, NodeStatus::kMeasured, 1.8, 9);
    auto explorer = Make("graph-ucb", 10.0);
    auto exploiter = Make("graph-ucb", 0.0);
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
      std::mt19937_64 rng(seed);
      CHECK(explorer->Select(graph, rng) == NodeId{2});
      CHECK(exploiter->Select(graph, rng) == NodeId{1});
    }
  }

  TEST_CASE("graph-ucb spreads its choices as expansions are noted") {
    SearchGraph graph;
    Add(graph, 1, NodeStatus::kMeasured, 1.0);
    Add(graph, 2, NodeStatus::kMeasured, 1.0);
    Add(graph, 3, NodeStatus::kMeasured, 1.0);
    auto strategy = Make("graph-ucb", 1.0);
    std::mt19937_64 rng(9);
    std::map<NodeId, int> counts;
    for (int i = 0; i < 30; ++i) {
      const auto chosen = strategy->Select(graph, rng);
      REQUIRE(chosen.has_value());
      ++counts[*chosen];
      graph.NoteExpansion(*chosen);
    }
    // Equal speedups: the exploration term alternates between them.
    for (NodeId id : {1, 2, 3}) CHECK(counts[id] == 10);
  }

  TEST_CASE("random covers every candidate over many draws, and only candidates") {
    SearchGraph graph = MixedGraph();
    auto strategy = Make("random");
    std::mt19937_64 rng(17);
    std::map<NodeId, int> counts;
    for (int i = 0; i < 600; ++i) {
      const auto chosen = strategy->Select(graph, rng);
      REQUIRE(chosen.has_value());
      ++counts[*chosen];
    }
    CHECK(counts.size() == 3);
    for (NodeId id : {1, 4, 6}) CHECK(counts[id] > 100);
  }

  TEST_CASE("random is deterministic for a given seed") {
    SearchGraph graph = MixedGraph();
    auto strategy = Make("random");
    std::mt19937_64 a(5), b(5);
    for (int i = 0; i < 50; ++i) CHECK(strategy->Select(graph, a) == strategy->Select(graph, b));
  }

  TEST_CASE("an unknown name is refused") {
    auto strategy = MakeStrategy(StrategyConfig{"beam-search", 1.0});
    REQUIRE_FALSE(strategy.has_value());
    CHECK(strategy.error().IsInvalidArgument());
    CHECK(strategy.error().message().find("beam-search") != std::string::npos);
  }
}
