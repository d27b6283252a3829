// ComputeDirectionStats (search/mutators/direction_stats.h): what `kestrel
// stats` prints, from nodes and edges as the store holds them.

#include "search/mutators/direction_stats.h"
#include "search/mutators/prompt.h"

#include <doctest.h>

#include <fmt/format.h>

#include <map>

namespace kestrel {
namespace {

NodeRecord Node(std::int64_t id, NodeStatus status, std::optional<double> speedup, const std::string& mutation) {
  NodeRecord node;
  node.id = id;
  node.status = status;
  node.speedup = speedup;
  node.mutation = mutation;
  return node;
}

EdgeRecord Edge(std::int64_t parent, std::int64_t child, const std::string& mutation, std::int64_t run = 1,
                EdgeKind kind = EdgeKind::kDerive) {
  return {parent, child, kind, run, mutation, 0};
}

TEST_CASE("a mutation's category: its bandit direction, its recommendation rank, or its kind") {
  CHECK(DirectionCategory("llm:gpt-5:vectorize") == "vectorize");
  CHECK(DirectionCategory("llm:ollama:llama3:tile for cache") == "tile for cache");  // a model with a colon
  CHECK(DirectionCategory("llm:m:rec 2/3: tile the k loop: by 64") == "analysis rec 2");
  CHECK(DirectionCategory("llm:m:fix build_failed") == "fix");
  // A reply's versions (variants) count under their direction.
  CHECK(DirectionCategory("llm:gpt-5:vectorize (version 2 of 3)") == "vectorize");
  CHECK(DirectionCategory("llm:gpt-5:vectorize (version 3 of 3, 1.84x predicted)") == "vectorize");
  CHECK(DirectionCategory("llm:m:rec 1/3: unroll by 4 (version 1 of 2)") == "analysis rec 1");
  CHECK(DirectionCategory("llm:gpt-5:vectorize (1.84x predicted)") == "vectorize");  // a reply's lone version
  // How the llm mutator labels them (prompt.h).
  CHECK(VersionLabel("llm:m:unroll", 1, 3) == "llm:m:unroll (version 2 of 3)");
  CHECK(VersionLabel("llm:m:unroll", 0, 1) == "llm:m:unroll");
  CHECK(WithPrediction("llm:m:unroll (version 2 of 3)", 1.844) == "llm:m:unroll (version 2 of 3, 1.84x predicted)");
  CHECK(WithPrediction("llm:m:unroll", 0.5) == "llm:m:unroll (0.50x predicted)");
  CHECK(PredictedSpeedup(WithPrediction("llm:m:unroll", 0.5)) == doctest::Approx(0.5));
  CHECK(DirectionCategory("combine #3 + #9: llm:m") == "combine");
  CHECK(DirectionCategory("knob U 1->2") == "knob");
  CHECK(DirectionCategory("restart: A=1 B=2") == "knob restart");
  CHECK(DirectionCategory("marginals (odds 3.2): A 1->3") == "knob marginals");
  CHECK(DirectionCategory("model (1.31x predicted): A=4") == "knob model");
  CHECK(DirectionCategory("polish (1.20x predicted): A=4") == "knob polish");
  CHECK(DirectionCategory("screen: A 1->2") == "knob screen");
  CHECK(DirectionCategory("cross with A=1 B=3: A=1 B=2") == "knob cross");
  CHECK(DirectionCategory("multi: A=2 C=1") == "knob multi");
  CHECK(DirectionCategory("llm:m:something new") == "llm");
}

TEST_CASE("per category: tries, children faster than their parent, failures, pending and the mean gain") {
  const std::vector<NodeRecord> nodes = {
      Node(1, NodeStatus::kMeasured, 2.0, "seed:seed.cpp"),
      Node(2, NodeStatus::kMeasured, 3.0, "llm:m:vectorize"),         // +50%
      Node(3, NodeStatus::kMeasured, 1.0, "llm:m:vectorize"),         // -50%
      Node(4, NodeStatus::kBuildFailed, std::nullopt, "llm:m:unroll"),
      Node(5, NodeStatus::kMeasured, 3.3, "llm:m:rec 1/2: tile"),     // +10% over node 2
      Node(6, NodeStatus::kBuilt, std::nullopt, "knob U 1->2"),
      Node(7, NodeStatus::kMeasured, 2.0, "llm:m:fix build_failed"),
  };
  const std::vector<EdgeRecord> edges = {
      Edge(1, 2, "llm:m:vectorize"),     Edge(1, 3, "llm:m:vectorize"),
      Edge(1, 4, "llm:m:unroll"),        Edge(2, 5, "llm:m:rec 1/2: tile", 2),
      Edge(2, 6, "knob U 1->2", 2),      Edge(4, 7, "llm:m:fix build_failed", 1, EdgeKind::kFix),
      Edge(2, 1, "llm:m:unroll", 1, EdgeKind::kDuplicate),  // a duplicate makes no child
  };
  std::map<std::string, DirectionStats> all;
  for (const DirectionStats& row : ComputeDirectionStats(nodes, edges)) all[row.category] = row;
  REQUIRE(all.size() == 5);
  CHECK(ComputeDirectionStats(nodes, edges).front().category == "vectorize");  // most tries first
  CHECK(all["vectorize"].tries == 2);
  CHECK(all["vectorize"].successes == 1);
  CHECK(all["vectorize"].failures == 0);
  CHECK(all["vectorize"].mean_gain == doctest::Approx(0.0));
  CHECK(all["unroll"].tries == 1);
  CHECK(all["unroll"].failures == 1);
  CHECK(all["unroll"].gains == 0);
  CHECK(all["analysis rec 1"].successes == 1);
  CHECK(all["analysis rec 1"].mean_gain == doctest::Approx(0.1));
  CHECK(all["knob"].pending == 1);
  CHECK(all["fix"].tries == 1);
  CHECK(all["fix"].gains == 0);  // its parent failed: no gain to speak of
  // One run only.
  const auto run2 = ComputeDirectionStats(nodes, edges, 2);
  REQUIRE(run2.size() == 2);
  for (const DirectionStats& row : run2) CHECK((row.category == "analysis rec 1" || row.category == "knob"));
}

TEST_CASE("a cost model's predictions against the measurements: count, rank correlation and median error") {
  CHECK(PredictedSpeedup("model (3.10x predicted): TILE 16->32") == doctest::Approx(3.10));
  CHECK(PredictedSpeedup("llm:m:unroll (version 2 of 3, 1.84x predicted)") == doctest::Approx(1.84));
  CHECK_FALSE(PredictedSpeedup("llm:m:unroll (version 1 of 3)").has_value());
  CHECK_FALSE(PredictedSpeedup("x predicted").has_value());
  std::vector<NodeRecord> nodes = {Node(1, NodeStatus::kMeasured, 1.0, "seed:seed.cpp")};
  std::vector<EdgeRecord> edges;
  // The knob model: predicted 1.0, 2.0, 3.0, 4.0 measured 1.1, 2.2, 2.7, 4.0
  // (the same order: rank correlation 1; errors 10%, 10%, 10%, 0%), and one
  // that failed (no measurement to compare).
  const double predicted[] = {1.0, 2.0, 3.0, 4.0}, measured[] = {1.1, 2.2, 2.7, 4.0};
  for (int i = 0; i < 4; ++i) {
    const std::string mutation = fmt::format("model ({:.2f}x predicted): A={}", predicted[i], i);
    nodes.push_back(Node(10 + i, NodeStatus::kMeasured, measured[i], mutation));
    edges.push_back(Edge(1, 10 + i, mutation));
  }
  nodes.push_back(Node(20, NodeStatus::kWrong, std::nullopt, "model (9.00x predicted): A=9"));
  edges.push_back(Edge(1, 20, "model (9.00x predicted): A=9"));
  // A reply's versions, ranked backwards: predicted 3, 2, 1 measured 1, 2, 3.
  for (int i = 0; i < 3; ++i) {
    const std::string mutation = fmt::format("llm:m:unroll (version {} of 3, {:.2f}x predicted)", i + 1, 3.0 - i);
    nodes.push_back(Node(30 + i, NodeStatus::kMeasured, 1.0 + i, mutation));
    edges.push_back(Edge(1, 30 + i, mutation));
  }
  // Versions before the model was fitted say nothing of it.
  nodes.push_back(Node(40, NodeStatus::kMeasured, 2.0, "llm:m:unroll (version 1 of 3)"));
  edges.push_back(Edge(1, 40, "llm:m:unroll (version 1 of 3)"));
  std::map<std::string, DirectionStats> all;
  for (const DirectionStats& row : ComputeDirectionStats(nodes, edges)) all[row.category] = row;
  const DirectionStats& knob = all["knob model"];
  CHECK(knob.tries == 5);
  CHECK(knob.predicted == 4);
  REQUIRE(knob.rank_correlation);
  CHECK(*knob.rank_correlation == doctest::Approx(1.0));
  CHECK(*knob.median_error == doctest::Approx(0.1));
  const DirectionStats& unroll = all["unroll"];
  CHECK(unroll.tries == 4);
  CHECK(unroll.predicted == 3);
  CHECK(*unroll.rank_correlation == doctest::Approx(-1.0));
  CHECK(*unroll.median_error == doctest::Approx(2.0 / 3.0));  // errors 2/3, 0 and 2
}

}  // namespace
}  // namespace kestrel
