// The strategies (search/strategies/strategy.h): which node is expanded next, and
// their saved state.

#include <doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graph/search_graph.h"
#include "search/knobs/knob_advisor.h"
#include "search/strategies/strategies.h"
#include "search/strategies/strategy.h"
#include "search/strategies/ucb_index.h"
#include "tests/testing.h"

using namespace kestrel;

namespace {

const char* const kNames[] = {"graph-ucb", "beam", "greedy", "islands", "random", "model", "portfolio"};

std::unique_ptr<Strategy> Make(const StrategyConfig& config) {
  auto strategy = MakeStrategy(config);
  REQUIRE_MESSAGE(strategy.has_value(), testing::ErrorOf(strategy));
  return std::move(*strategy);
}

std::unique_ptr<Strategy> Make(const std::string& name, double exploration = 1.0) {
  StrategyConfig config;
  config.name = name;
  config.exploration = exploration;
  return Make(config);
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

// A measured node derived from `parent` (edge kind `kind`).
void AddChild(SearchGraph& graph, NodeId id, NodeId parent, double speedup, EdgeKind kind = EdgeKind::kDerive,
              int expansions = 0) {
  Add(graph, id, NodeStatus::kMeasured, speedup, expansions);
  graph.AddDerivation(parent, id, kind);
}

// One step of a search as the engine drives one: `chosen` was expanded into
// `child`, a failure one time in four, else measured at its parent's speed
// times a factor in [0.7, 1.4); one step in nine re-measures a random node
// (a confirmation's median moves).
void Grow(SearchGraph& graph, NodeId chosen, NodeId child, std::mt19937_64& world) {
  std::uniform_real_distribution<double> factor(0.7, 1.4);
  graph.NoteExpansion(chosen);
  if (world() % 4 == 0) {
    Add(graph, child, NodeStatus::kWrong);
  } else {
    Add(graph, child, NodeStatus::kMeasured, *graph.Node(chosen).speedup * factor(world));
  }
  graph.AddDerivation(chosen, child, EdgeKind::kDerive);
  if (world() % 9 == 0) {
    const NodeId again = 1 + static_cast<NodeId>(world() % static_cast<std::uint64_t>(child));
    if (graph.Node(again).status == NodeStatus::kMeasured) {
      graph.SetResult(again, NodeStatus::kMeasured, *graph.Node(again).speedup * factor(world));
    }
  }
}

// A search as the engine drives one, without mutators: each step selects a
// parent, notes the expansion and adds a measured child whose speedup is the
// parent's times a factor in [0.8, 1.25) drawn from `world`.
class Simulation {
 public:
  explicit Simulation(std::uint64_t world_seed = 42) : world_(world_seed) {}
  SearchGraph& graph() { return graph_; }

  // The child's id, or nullopt when nothing was selected.
  std::optional<NodeId> Step(Strategy& strategy, std::mt19937_64& rng, std::optional<NodeId>* parent = nullptr) {
    const auto chosen = strategy.Select(graph_, rng);
    if (parent) *parent = chosen;
    if (!chosen) return std::nullopt;
    return Expand(*chosen);
  }

  NodeId Expand(NodeId parent) {
    graph_.NoteExpansion(parent);
    std::uniform_real_distribution<double> factor(0.8, 1.25);
    const NodeId child = next_id_++;
    AddChild(graph_, child, parent, *graph_.Node(parent).speedup * factor(world_));
    return child;
  }

 private:
  SearchGraph graph_;
  std::mt19937_64 world_;
  NodeId next_id_ = 1000;
};

// Small enough that every strategy's state has something in each field.
StrategyConfig ConfigFor(const std::string& name) {
  StrategyConfig config;
  config.name = name;
  config.beam_width = 3;
  config.islands = 3;
  config.migration_interval = 4;
  return config;
}

// A simulation with two measured roots, 1 (1.0x) and 2 (`second`).
Simulation TwoRoots(std::uint64_t world_seed, double second) {
  Simulation simulation(world_seed);
  Add(simulation.graph(), 1, NodeStatus::kMeasured, 1.0);
  Add(simulation.graph(), 2, NodeStatus::kMeasured, second);
  return simulation;
}

// The k fastest of `nodes`, best first, ties by lower id: the beam's order.
std::vector<NodeId> TopBySpeedup(const SearchGraph& graph, std::vector<NodeId> nodes, std::size_t k) {
  std::sort(nodes.begin(), nodes.end(), [&graph](NodeId a, NodeId b) {
    const double sa = *graph.Node(a).speedup, sb = *graph.Node(b).speedup;
    return sa != sb ? sa > sb : a < b;
  });
  nodes.resize(std::min(k, nodes.size()));
  return nodes;
}

std::vector<NodeId> Measured(const SearchGraph& graph, const Strategy& strategy) {
  std::vector<NodeId> nodes;
  for (NodeId id : graph.Nodes()) {
    if (graph.Node(id).status == NodeStatus::kMeasured && !strategy.IsExhausted(id)) nodes.push_back(id);
  }
  return nodes;
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

  TEST_CASE("an unknown name is refused, and the message lists every known name") {
    auto strategy = MakeStrategy(StrategyConfig{"beam-search", 1.0});
    REQUIRE_FALSE(strategy.has_value());
    CHECK(strategy.error().IsInvalidArgument());
    CHECK(strategy.error().message().find("beam-search") != std::string::npos);
    for (const char* name : kNames) CHECK(strategy.error().message().find(name) != std::string::npos);
    CHECK(StrategyNames() == std::vector<std::string>(std::begin(kNames), std::end(kNames)));
  }
}

TEST_SUITE("strategy: graph-ucb") {
  // Root 1 (1.0x) with two equally fast children, 2 and 3 (1.5x); 2's child
  // 4 (3.0x) is exhausted, so only 1, 2 and 3 can be chosen.
  SearchGraph LineageGraph() {
    SearchGraph graph;
    Add(graph, 1, NodeStatus::kMeasured, 1.0, 2);
    AddChild(graph, 2, 1, 1.5, EdgeKind::kDerive, 1);
    AddChild(graph, 3, 1, 1.5, EdgeKind::kDerive, 1);
    AddChild(graph, 4, 2, 3.0);
    return graph;
  }

  TEST_CASE("prefers a node whose subtree holds the best speedup over an equally fast leaf") {
    SearchGraph graph = LineageGraph();
    // A duplicate edge (a re-proposal of 4 from 3) does not make 4 a descendant of 3.
    graph.AddDerivation(3, 4, EdgeKind::kDuplicate);
    for (double exploration : {0.0, 0.3, 1.0}) {
      CAPTURE(exploration);
      for (std::uint64_t seed = 0; seed < 20; ++seed) {
        auto strategy = Make("graph-ucb", exploration);
        strategy->MarkExhausted(4);
        std::mt19937_64 rng(seed);
        CHECK(strategy->Select(graph, rng) == NodeId{2});
      }
    }
  }

  TEST_CASE("the incremental index chooses as a full scan does, as the graph grows and nodes are exhausted") {
    // PickByUcb over every expandable node (the definition) against the
    // UcbIndex graph-ucb uses, on a search that adds measured and failed
    // children, re-measures nodes (a confirmation's median) and exhausts some.
    for (const double subtree_weight : {0.0, 0.5, 1.0}) {
      CAPTURE(subtree_weight);
      const strategies::UcbWeights weights{1.0, subtree_weight};
      strategies::UcbIndex index(weights);
      std::set<NodeId> exhausted;
      const auto is_exhausted = [&exhausted](NodeId id) { return exhausted.count(id) > 0; };
      SearchGraph graph;
      Add(graph, 1, NodeStatus::kMeasured, 1.0);
      std::mt19937_64 world(7), rng_index(1), rng_scan(1);
      NodeId next = 2;
      int compared = 0;
      for (int step = 0; step < 400; ++step) {
        // Half way, a resume: the rest of the search from an index that read
        // the graph at once (its first batch changing under the search).
        if (step == 200) index = strategies::UcbIndex(weights);
        std::vector<NodeId> expandable;
        for (NodeId id : graph.Nodes()) {
          const GraphNode& node = graph.Node(id);
          if (node.status == NodeStatus::kMeasured && !exhausted.count(id)) expandable.push_back(id);
        }
        const auto chosen = index.Select(graph, is_exhausted, rng_index);
        if (expandable.empty()) {
          CHECK_FALSE(chosen.has_value());
          break;
        }
        strategies::SubtreeBest subtree;
        subtree.Update(graph);
        const NodeId expected = strategies::PickByUcb(graph, expandable, subtree, weights, rng_scan);
        REQUIRE(chosen.has_value());
        // The score, by the definition; exact ties (with subtree_weight 1 a
        // lineage shares v) may go either way.
        double best = 0, total = 0;
        for (NodeId id : expandable) {
          best = std::max(best, std::max(*graph.Node(id).speedup, subtree.Of(id)));
          total += graph.Node(id).expansions;
        }
        const auto score = [&](NodeId id) {
          const GraphNode& node = graph.Node(id);
          const double a = 1 - subtree_weight;
          return (a * *node.speedup + (1 - a) * std::max(*node.speedup, subtree.Of(id))) / best +
                 std::sqrt(std::log(1 + total) / (1 + node.expansions));
        };
        CHECK(score(*chosen) == doctest::Approx(score(expected)).epsilon(1e-12));
        if (subtree_weight < 1) CHECK(*chosen == expected);
        if (step % 50 == 49) {  // an index that reads the graph at once (a resume) agrees
          strategies::UcbIndex fresh(weights);
          std::mt19937_64 rng_fresh(3);
          const auto again = fresh.Select(graph, is_exhausted, rng_fresh);
          REQUIRE(again.has_value());
          CHECK(score(*again) == doctest::Approx(score(expected)).epsilon(1e-12));
        }
        compared += *chosen == expected;
        Grow(graph, *chosen, next++, world);
        if (world() % 7 == 0) {
          exhausted.insert(*chosen);
          index.Drop(*chosen);
        }
      }
      CHECK(compared > (subtree_weight < 1 ? 300 : 100));
    }
  }

  TEST_CASE("random, greedy and beam choose as their full-scan definitions do, as the graph grows and changes") {
    // Each strategy against its definition over every expandable node in
    // insertion order (random: the k-th of them for the same draw; greedy:
    // the first fastest; beam: the fastest W when a generation starts), on a
    // search that adds measured and failed children, re-measures nodes and
    // exhausts some, with a restored copy reading the graph at once.
    for (const std::string name : {"random", "greedy", "beam"}) {
      CAPTURE(name);
      StrategyConfig config;
      config.name = name;
      config.beam_width = 3;
      config.keep_factor = 2;
      auto strategy = Make(config);
      SearchGraph graph;
      Add(graph, 1, NodeStatus::kMeasured, 1.0);
      std::mt19937_64 world(11), rng(5), rng_scan(5);
      int generation = 0, generations = 0;  // beam
      NodeId next = 2;
      for (int step = 0; step < 300; ++step) {
        const std::vector<NodeId> expandable = Measured(graph, *strategy);
        const auto chosen = strategy->Select(graph, rng);
        if (expandable.empty()) {
          CHECK_FALSE(chosen.has_value());
          break;
        }
        REQUIRE(chosen.has_value());
        if (name == "random") {
          std::uniform_int_distribution<std::size_t> pick(0, expandable.size() - 1);
          CHECK(*chosen == expandable[pick(rng_scan)]);
        } else if (name == "greedy") {
          CHECK(*chosen == TopBySpeedup(graph, expandable, 1).front());
        } else {
          const nlohmann::json state = strategy->SaveState();
          if (state.at("generation").get<int>() != generation) {  // it started from the graph as it is
            generation = state.at("generation").get<int>();
            CHECK(state.at("members").get<std::vector<NodeId>>() == TopBySpeedup(graph, expandable, 3));
            ++generations;
          }
        }
        if (step % 40 == 39 && name != "beam") {  // a restored strategy reads the graph at once
          auto fresh = Make(config);
          REQUIRE(fresh->RestoreState(strategy->SaveState()));
          std::mt19937_64 a(9), b(9);
          std::uniform_int_distribution<std::size_t> pick(0, expandable.size() - 1);
          CHECK(fresh->Select(graph, a) ==
                (name == "random" ? expandable[pick(b)] : TopBySpeedup(graph, expandable, 1).front()));
        }
        Grow(graph, *chosen, next++, world);
        if (world() % 7 == 0) strategy->MarkExhausted(*chosen);
      }
      if (name == "beam") CHECK(generations > 20);
    }
  }

  TEST_CASE("with subtree_weight 0 the two equally fast children tie") {
    const SearchGraph graph = LineageGraph();
    StrategyConfig config;
    config.subtree_weight = 0.0;
    config.exploration = 0.0;
    std::set<NodeId> chosen;
    for (std::uint64_t seed = 0; seed < 40; ++seed) {
      auto strategy = Make(config);
      strategy->MarkExhausted(4);
      std::mt19937_64 rng(seed);
      chosen.insert(*strategy->Select(graph, rng));
    }
    CHECK(chosen == std::set<NodeId>{2, 3});
  }

  TEST_CASE("a new best deep in a lineage raises every ancestor, between two selections") {
    SearchGraph graph = LineageGraph();
    auto strategy = Make("graph-ucb", 0.0);
    strategy->MarkExhausted(4);
    std::mt19937_64 rng(1);
    REQUIRE(strategy->Select(graph, rng) == NodeId{2});
    // 3's grandchild is measured at 6x: 3's subtree now holds the best.
    AddChild(graph, 5, 3, 1.2);
    AddChild(graph, 6, 5, 6.0);
    for (NodeId id : {5, 6}) strategy->MarkExhausted(id);
    CHECK(strategy->Select(graph, rng) == NodeId{3});
    // A node whose measurement arrives later (proposed, then measured) counts too.
    Add(graph, 7, NodeStatus::kProposed);
    graph.AddDerivation(2, 7, EdgeKind::kDerive);
    CHECK(strategy->Select(graph, rng) == NodeId{3});
    graph.SetResult(7, NodeStatus::kMeasured, 9.0);
    strategy->MarkExhausted(7);
    CHECK(strategy->Select(graph, rng) == NodeId{2});
  }
}

TEST_SUITE("strategy: beam") {
  TEST_CASE("a generation expands the top W nodes k times each, in turns from the best") {
    SearchGraph graph;
    const double speedups[] = {1.0, 3.0, 2.0, 0.5, 2.5, 1.5};
    for (NodeId id = 1; id <= 6; ++id) Add(graph, id, NodeStatus::kMeasured, speedups[id - 1]);
    StrategyConfig config;
    config.name = "beam";
    config.beam_width = 3;
    config.keep_factor = 2;
    auto strategy = Make(config);
    std::mt19937_64 rng(1);
    std::vector<NodeId> chosen;
    for (int i = 0; i < 6; ++i) chosen.push_back(*strategy->Select(graph, rng));
    CHECK(chosen == std::vector<NodeId>{2, 5, 3, 2, 5, 3});
    // A member exhausted mid-generation is skipped; the next generation
    // starts from the graph as it is then.
    Add(graph, 7, NodeStatus::kMeasured, 10.0);
    strategy->MarkExhausted(5);
    chosen.clear();
    for (int i = 0; i < 6; ++i) chosen.push_back(*strategy->Select(graph, rng));
    CHECK(chosen == std::vector<NodeId>{7, 2, 3, 7, 2, 3});
  }

  TEST_CASE("never selects outside the top W of its generation's start, however good the children") {
    for (std::uint64_t seed = 0; seed < 5; ++seed) {
      CAPTURE(seed);
      Simulation simulation(seed);
      SearchGraph& graph = simulation.graph();
      for (NodeId id = 1; id <= 8; ++id) Add(graph, id, NodeStatus::kMeasured, 1.0 + 0.1 * static_cast<double>(id));
      StrategyConfig config;
      config.name = "beam";
      config.beam_width = 3;
      config.keep_factor = 2;
      auto strategy = Make(config);
      std::mt19937_64 rng(seed);
      for (int generation = 0; generation < 6; ++generation) {
        const auto top = TopBySpeedup(graph, Measured(graph, *strategy), 3);
        std::map<NodeId, int> counts;
        for (int i = 0; i < 6; ++i) {
          std::optional<NodeId> parent;
          simulation.Step(*strategy, rng, &parent);
          REQUIRE(parent.has_value());
          CHECK(std::find(top.begin(), top.end(), *parent) != top.end());
          ++counts[*parent];
        }
        for (NodeId id : top) CHECK(counts[id] == 2);
      }
    }
  }
}

namespace {

using IslandLists = std::map<NodeId, std::vector<int>>;

// A saved islands state's [[node, [islands]], ...].
IslandLists ReadIslandLists(const nlohmann::json& pairs) {
  IslandLists lists;
  for (const auto& pair : pairs) lists[pair[0].get<NodeId>()] = pair[1].get<std::vector<int>>();
  return lists;
}

// Islands by its definition, the full scan it made before its index: the
// expandable nodes split into islands by their homes and guests, and graph-ucb's
// score over an island's members, v(n) the best speedup ever measured in n's
// subtree (a re-measured node keeps its best, as UcbIndex folds every result
// in). Ties (within 1e-9) go to a draw among the tied in id order, as
// UcbIndex breaks them.
struct IslandsScan {
  int count;
  int interval;
  strategies::UcbWeights weights;
  std::map<NodeId, double> ever = {};  // each node's best measurement so far
  std::size_t journal = 0;             // graph changes read into `ever`

  // Reads every measurement since the last call (new nodes are in the journal:
  // the test sets their results after adding them).
  void Follow(const SearchGraph& graph) {
    for (; journal < graph.ChangeCount(); ++journal) {
      const GraphNode& node = graph.Node(graph.ChangedAt(journal));
      if (node.status == NodeStatus::kMeasured) ever[node.id] = std::max(ever[node.id], *node.speedup);
    }
  }

  // v of every node, each measurement credited to the node and its lineage.
  std::map<NodeId, double> SubtreeBests(const SearchGraph& graph) const {
    std::map<NodeId, double> best;
    for (const auto& [id, speedup] : ever) {
      for (NodeId above : graph.Lineage(id)) best[above] = std::max(best[above], speedup);
    }
    return best;
  }

  // Each island's expandable members, from the homes after the selection
  // (the new nodes' homes are dealt in it) and the guests before it.
  std::vector<std::vector<NodeId>> Members(const SearchGraph& graph, const Strategy& strategy,
                                           const nlohmann::json& after, const IslandLists& guests) const {
    std::map<NodeId, int> home;
    for (const auto& pair : after.at("home")) home[pair[0].get<NodeId>()] = pair[1].get<int>();
    std::vector<std::vector<NodeId>> members(static_cast<std::size_t>(count));
    for (NodeId id : Measured(graph, strategy)) {
      members[static_cast<std::size_t>(home.at(id))].push_back(id);
      if (const auto it = guests.find(id); it != guests.end()) {
        for (int island : it->second) members[static_cast<std::size_t>(island)].push_back(id);
      }
    }
    return members;
  }

  // The choice in an island; `drawn` counts the draws among ties.
  NodeId Pick(const SearchGraph& graph, const std::vector<NodeId>& members, std::mt19937_64& rng, int& drawn) const {
    std::map<NodeId, double> subtree = SubtreeBests(graph);
    const double a = 1.0 - weights.subtree_weight;
    double best = 0, total = 0;
    for (NodeId id : members) {
      best = std::max(best, std::max(*graph.Node(id).speedup, subtree[id]));
      total += graph.Node(id).expansions;
    }
    std::vector<std::pair<double, NodeId>> scores;
    double top = -1e300;
    for (NodeId id : members) {
      const GraphNode& node = graph.Node(id);
      const double q = a * *node.speedup + (1.0 - a) * std::max(*node.speedup, subtree[id]);
      const double score = (best > 0 ? q / best : 0.0) +
                           weights.exploration * std::sqrt(std::log(1.0 + total) / (1.0 + node.expansions));
      scores.emplace_back(score, id);
      top = std::max(top, score);
    }
    std::vector<NodeId> tied;
    for (const auto& [score, id] : scores) {
      if (top - score <= 1e-9) tied.push_back(id);
    }
    std::sort(tied.begin(), tied.end());
    if (tied.size() == 1) return tied.front();
    ++drawn;
    std::uniform_int_distribution<std::size_t> pick(0, tied.size() - 1);
    return tied[pick(rng)];
  }

  // The fastest of each island (ties: lower id) joins the next, unless that is its home.
  IslandLists Migrated(const SearchGraph& graph, const std::vector<std::vector<NodeId>>& members,
                       const nlohmann::json& after, IslandLists guests) const {
    std::map<NodeId, int> home;
    for (const auto& pair : after.at("home")) home[pair[0].get<NodeId>()] = pair[1].get<int>();
    std::vector<std::optional<NodeId>> fastest(members.size());
    for (std::size_t island = 0; island < members.size(); ++island) {
      for (NodeId id : members[island]) {
        const auto& current = fastest[island];
        const double speedup = *graph.Node(id).speedup;
        if (!current || speedup > *graph.Node(*current).speedup ||
            (speedup == *graph.Node(*current).speedup && id < *current)) {
          fastest[island] = id;
        }
      }
    }
    for (std::size_t island = 0; island < members.size(); ++island) {
      if (!fastest[island]) continue;
      const int target = static_cast<int>((island + 1) % members.size());
      if (home.at(*fastest[island]) == target) continue;
      std::vector<int>& visits = guests[*fastest[island]];
      if (std::find(visits.begin(), visits.end(), target) == visits.end()) visits.push_back(target);
    }
    return guests;
  }
};

}  // namespace

TEST_SUITE("strategy: islands") {
  StrategyConfig IslandConfig(int islands, int interval) {
    StrategyConfig config;
    config.name = "islands";
    config.islands = islands;
    config.migration_interval = interval;
    config.exploration = 0.0;
    return config;
  }

  // Seeds 1 (slow) and 2 (three times as fast), one per island.
  Simulation TwoSeeds() { return TwoRoots(3, 3.0); }

  NodeId RootOf(SearchGraph& graph, NodeId id) { return graph.Lineage(id).front(); }

  TEST_CASE("islands keep their lineages apart until a migration") {
    Simulation simulation = TwoSeeds();
    auto strategy = Make(IslandConfig(2, 1000));
    std::mt19937_64 rng(5);
    for (int i = 0; i < 40; ++i) {
      std::optional<NodeId> parent;
      simulation.Step(*strategy, rng, &parent);
      REQUIRE(parent.has_value());
      // Served in turn: island 0 holds seed 1's lineage, island 1 seed 2's,
      // although seed 2's lineage is much faster.
      CHECK(RootOf(simulation.graph(), *parent) == (i % 2 == 0 ? 1 : 2));
    }
  }

  TEST_CASE("a migration brings an island's best into the next island, where it is expanded") {
    Simulation simulation = TwoSeeds();
    auto strategy = Make(IslandConfig(2, 4));
    std::mt19937_64 rng(5);
    std::vector<NodeId> roots;
    for (int i = 0; i < 12; ++i) {
      std::optional<NodeId> parent;
      simulation.Step(*strategy, rng, &parent);
      REQUIRE(parent.has_value());
      roots.push_back(RootOf(simulation.graph(), *parent));
    }
    // Before the first migration (after 4 selections): apart.
    CHECK(roots[0] == 1);
    CHECK(roots[1] == 2);
    CHECK(roots[2] == 1);
    CHECK(roots[3] == 2);
    // Then island 0 holds island 1's best (from seed 2, far faster) and,
    // exploiting only, expands it.
    CHECK(roots[4] == 2);
    // The child made for island 0 lives in island 0 ("home" pairs).
    const nlohmann::json state = strategy->SaveState();
    int homes_in_0_from_2 = 0;
    for (const auto& pair : state.at("home")) {
      const NodeId id = pair[0].get<NodeId>();
      homes_in_0_from_2 += pair[1].get<int>() == 0 && RootOf(simulation.graph(), id) == 2;
    }
    CHECK(homes_in_0_from_2 > 0);
    CHECK_FALSE(state.at("guests").empty());
  }

  TEST_CASE("roots are dealt to islands in turn and an island without expandable nodes is skipped") {
    SearchGraph graph;
    for (NodeId id = 1; id <= 5; ++id) Add(graph, id, NodeStatus::kMeasured, 1.0);
    StrategyConfig config = IslandConfig(3, 1000);
    config.exploration = 1.0;  // equal speedups: the rarely expanded goes first
    auto strategy = Make(config);
    strategy->MarkExhausted(2);  // island 1 holds 2 and 5
    strategy->MarkExhausted(5);
    std::mt19937_64 rng(1);
    std::vector<NodeId> chosen;
    for (int i = 0; i < 4; ++i) {
      chosen.push_back(*strategy->Select(graph, rng));
      graph.NoteExpansion(chosen.back());
    }
    // Island 0 = {1, 4}, island 2 = {3}; island 1 has nothing to expand.
    CHECK(chosen[0] != NodeId{3});
    CHECK(chosen[1] == NodeId{3});
    CHECK(chosen[2] != NodeId{3});
    CHECK(chosen[3] == NodeId{3});
    CHECK(std::set<NodeId>{chosen[0], chosen[2]} == std::set<NodeId>{1, 4});
  }

  TEST_CASE("a restored state whose guests repeat an island or name the home reads them as the set of islands") {
    Simulation simulation = TwoSeeds();
    auto strategy = Make(IslandConfig(3, 4));
    std::mt19937_64 rng(8);
    for (int i = 0; i < 12; ++i) simulation.Step(*strategy, rng);
    // The fastest homed node, which its home island chooses on its turn, a guest
    // of the next island; the hand-edited copy lists that island twice and the home.
    nlohmann::json clean = strategy->SaveState();
    NodeId fastest = 1;
    int home = -1;
    for (const auto& pair : clean.at("home")) {
      const NodeId id = pair[0].get<NodeId>();
      if (home < 0 || *simulation.graph().Node(id).speedup > *simulation.graph().Node(fastest).speedup) {
        fastest = id;
        home = pair[1].get<int>();
      }
    }
    const int next = (home + 1) % 3;
    clean["guests"] = nlohmann::json::array({nlohmann::json::array({fastest, nlohmann::json::array({next})})});
    nlohmann::json edited = clean;
    edited["guests"] = nlohmann::json::array({nlohmann::json::array({fastest, nlohmann::json::array({home, next, next})})});
    auto from_clean = Make(IslandConfig(3, 4));
    auto from_edited = Make(IslandConfig(3, 4));
    REQUIRE(from_clean->RestoreState(clean));
    REQUIRE(from_edited->RestoreState(edited));
    std::mt19937_64 rng_a(2), rng_b(2);
    int chosen_fastest = 0;
    for (int i = 0; i < 40; ++i) {
      const auto a = from_clean->Select(simulation.graph(), rng_a);
      REQUIRE(a == from_edited->Select(simulation.graph(), rng_b));
      REQUIRE(a.has_value());
      chosen_fastest += *a == fastest;
      simulation.Expand(*a);
    }
    CHECK(chosen_fastest > 0);
  }

  TEST_CASE("the incremental islands choose as their full scan does, through migrations, exhaustion and a resume") {
    // Each selection against the definition over every expandable node (a
    // brute-force scan of the saved homes and guests), on a search that adds
    // measured and failed children, some exactly as fast as their parent (ties
    // to draw), re-measures nodes and exhausts some; twice the strategy is
    // replaced by one restored from its saved state, which reads the graph at once.
    for (const double subtree_weight : {0.0, 0.5}) {
      for (const double exploration : {0.3, 1.0}) {
        CAPTURE(subtree_weight);
        CAPTURE(exploration);
        StrategyConfig config = IslandConfig(3, 3);
        config.exploration = exploration;
        config.subtree_weight = subtree_weight;
        IslandsScan scan{3, 3, {exploration, subtree_weight}};
        auto strategy = Make(config);
        SearchGraph graph;
        const double seeds[] = {1.0, 1.0, 2.0, 1.0};  // four roots: island 0 is dealt two
        for (NodeId id = 1; id <= 4; ++id) Add(graph, id, NodeStatus::kMeasured, seeds[id - 1]);
        std::mt19937_64 world(23), rng(4);
        NodeId next = 5;
        int drawn = 0, migrations = 0, exhausted = 0, restored = 0;
        for (int step = 0; step < 360; ++step) {
          const nlohmann::json before = strategy->SaveState();
          std::mt19937_64 rng_scan = rng;
          const auto chosen = strategy->Select(graph, rng);
          const nlohmann::json after = strategy->SaveState();
          REQUIRE(after.at("home").size() == graph.NodeCount());
          const IslandLists guests = ReadIslandLists(before.at("guests"));
          scan.Follow(graph);
          const auto members = scan.Members(graph, *strategy, after, guests);
          std::optional<NodeId> expected;
          int island = 0;  // the island served
          for (int turn = 0; turn < scan.count && !expected; ++turn) {
            island = (before.at("next").get<int>() + turn) % scan.count;
            if (!members[static_cast<std::size_t>(island)].empty()) {
              expected = scan.Pick(graph, members[static_cast<std::size_t>(island)], rng_scan, drawn);
            }
          }
          REQUIRE(chosen == expected);
          if (!chosen) break;
          CHECK(rng == rng_scan);  // the same draws
          CHECK(after.at("next").get<int>() == (island + 1) % scan.count);
          if (after.at("selections").get<int>() % scan.interval == 0) {
            CHECK(ReadIslandLists(after.at("guests")) == scan.Migrated(graph, members, after, guests));
            ++migrations;
          } else {
            CHECK(ReadIslandLists(after.at("guests")) == guests);
          }
          const NodeId parent = *chosen;
          Grow(graph, parent, next, world);
          if (world() % 5 == 0 && graph.Node(next).status == NodeStatus::kMeasured) {
            graph.SetResult(next, NodeStatus::kMeasured, *graph.Node(parent).speedup);
          }
          ++next;
          if (world() % 7 == 0) {
            strategy->MarkExhausted(parent);
            ++exhausted;
          }
          if (step == 120 || step == 250) {
            auto fresh = Make(config);
            REQUIRE(fresh->RestoreState(strategy->SaveState()));
            strategy = std::move(fresh);
            ++restored;
          }
        }
        CHECK(restored == 2);
        CHECK(migrations > 100);
        CHECK(exhausted > 20);
        CHECK(drawn > 0);
      }
    }
  }
}

TEST_SUITE("strategy: state") {
  TEST_CASE("a restored strategy makes the same choices as the original") {
    for (const char* name : kNames) {
      for (int before : {0, 1, 7, 23}) {
        CAPTURE(name);
        CAPTURE(before);
        Simulation simulation = TwoRoots(11, 1.3);
        SearchGraph& graph = simulation.graph();
        auto original = Make(ConfigFor(name));
        std::mt19937_64 rng(99);
        for (int i = 0; i < before; ++i) {
          simulation.Step(*original, rng);
          if (i % 5 == 4) original->MarkExhausted(graph.Nodes()[static_cast<std::size_t>(i) % graph.NodeCount()]);
        }
        // Through text, as the engine stores it.
        const std::string saved = original->SaveState().dump();
        auto restored = Make(ConfigFor(name));
        const auto status = restored->RestoreState(nlohmann::json::parse(saved));
        REQUIRE_MESSAGE(status.has_value(), testing::ErrorOf(status));
        CHECK(restored->SaveState().dump() == saved);
        std::mt19937_64 rng_a = rng, rng_b = rng;
        for (int i = 0; i < 30; ++i) {
          const auto a = original->Select(graph, rng_a);
          const auto b = restored->Select(graph, rng_b);
          REQUIRE(a == b);
          if (!a) break;
          simulation.Expand(*a);
          if (i % 7 == 3) {
            original->MarkExhausted(*a);
            restored->MarkExhausted(*a);
          }
        }
        CHECK(original->SaveState() == restored->SaveState());
      }
    }
  }

  TEST_CASE("the default state is the sorted exhausted set") {
    for (const char* name : {"graph-ucb", "greedy", "random"}) {
      CAPTURE(name);
      auto strategy = Make(name);
      for (NodeId id : {9, 3, 5}) strategy->MarkExhausted(id);
      CHECK(strategy->SaveState() == nlohmann::json{{"exhausted", {3, 5, 9}}});
      auto fresh = Make(name);
      REQUIRE(fresh->RestoreState(strategy->SaveState()).has_value());
      for (NodeId id : {9, 3, 5}) CHECK(fresh->IsExhausted(id));
      CHECK_FALSE(fresh->IsExhausted(4));
    }
  }

  TEST_CASE("a malformed state is refused as InvalidArgument and changes nothing") {
    using nlohmann::json;
    // A state of each strategy with something to lose: nine selections and an exhausted node.
    std::map<std::string, json> valid;
    for (const char* name : kNames) {
      Simulation simulation(2);
      Add(simulation.graph(), 1, NodeStatus::kMeasured, 1.0);
      auto strategy = Make(ConfigFor(name));
      std::mt19937_64 rng(3);
      for (int i = 0; i < 9; ++i) simulation.Step(*strategy, rng);
      strategy->MarkExhausted(1);
      if (auto advisor = strategy->Advisor()) {  // a bandit window to lose
        const std::string source = "// kestrel:knob A 1 2 3\n// kestrel:knob B 1 2\n";
        advisor->Observe(1, source, {{"A", "1"}, {"B", "1"}}, 1.0, "seed:s.cpp", true);
        advisor->Observe(2, source, {{"A", "3"}, {"B", "2"}}, 2.0, "multi: A 1->3, B 1->2", true);
        advisor->Observe(3, source, {{"A", "2"}, {"B", "2"}}, std::nullopt, "knob A 3->2", true);
      }
      valid[name] = strategy->SaveState();
    }
    struct Bad {
      std::string strategy;
      std::string what;
      json state;
    };
    const auto with = [&valid](const std::string& name, const std::string& pointer, const json& value) {
      json state = valid.at(name);
      state[json::json_pointer(pointer)] = value;
      return state;
    };
    const auto without = [&valid](const std::string& name, const std::string& field) {
      json state = valid.at(name);
      state.erase(field);
      return state;
    };
    std::vector<Bad> cases = {
        {"graph-ucb", "not an object", json::array({1, 2})},
        {"graph-ucb", "exhausted null", with("graph-ucb", "/exhausted", nullptr)},
        {"graph-ucb", "exhausted not an array", with("graph-ucb", "/exhausted", "1,2")},
        {"graph-ucb", "exhausted holds a string", with("graph-ucb", "/exhausted", json::array({1, "2"}))},
        {"greedy", "exhausted holds a fraction", with("greedy", "/exhausted", json::array({1.5}))},
        {"random", "an unknown field", with("random", "/generation", 3)},
        {"graph-ucb", "a beam state", valid.at("beam")},
        {"beam", "a graph-ucb state", valid.at("graph-ucb")},
        {"beam", "quota of another length", with("beam", "/quota", json::array({1}))},
        {"beam", "quota above keep_factor", with("beam", "/quota/0", 3)},
        {"beam", "negative generation", with("beam", "/generation", -1)},
        {"beam", "cursor past the beam", with("beam", "/cursor", 7)},
        {"beam", "no members", without("beam", "members")},
        {"islands", "another number of islands", with("islands", "/islands", 4)},
        {"islands", "home island out of range", with("islands", "/home/0/1", 3)},
        {"islands", "home pair malformed", with("islands", "/home/0", json::array({1}))},
        {"islands", "guests not pairs", with("islands", "/guests", json::array({1, 2}))},
        {"islands", "next out of range", with("islands", "/next", 3)},
        {"islands", "selections a string", with("islands", "/selections", "9")},
        {"islands", "no waiting", without("islands", "waiting")},
        {"islands", "a graph-ucb state", valid.at("graph-ucb")},
        {"portfolio", "a technique it does not know", with("portfolio", "/advisor/bandit/0/0", "teleport")},
        {"portfolio", "a use without its verdict", with("portfolio", "/advisor/bandit/0", json::array({"multi"}))},
        {"portfolio", "an advisor that is not an object", with("portfolio", "/advisor", 3)},
        {"model", "a beam state", valid.at("beam")},
        {"graph-ucb", "a portfolio state", valid.at("portfolio")},
    };
    for (const Bad& bad : cases) {
      CAPTURE(bad.strategy);
      CAPTURE(bad.what);
      auto strategy = Make(ConfigFor(bad.strategy));
      REQUIRE(strategy->RestoreState(valid.at(bad.strategy)).has_value());
      const auto status = strategy->RestoreState(bad.state);
      REQUIRE_FALSE(status.has_value());
      CHECK(status.error().IsInvalidArgument());
      CHECK(status.error().message().find("strategy state") != std::string::npos);
      CHECK(strategy->SaveState() == valid.at(bad.strategy));
    }
  }
}

TEST_SUITE("strategy: journal") {
  // What the engine does: a state saved without its journal, and the
  // journal's new entries stored beside it, with each result.
  struct Stored {
    std::string state;
    std::vector<std::string> journal;
    void Save(Strategy& strategy) {
      state = strategy.SaveState(Strategy::StateParts::kWithoutJournal).dump();
      if (!strategy.PendingJournal().empty()) journal.push_back(strategy.PendingJournal().dump());
      strategy.JournalStored();
    }
    std::unique_ptr<Strategy> Resume(const StrategyConfig& config) const {
      auto strategy = Make(config);
      const auto restored = strategy->RestoreState(nlohmann::json::parse(state));
      REQUIRE_MESSAGE(restored.has_value(), testing::ErrorOf(restored));
      for (const std::string& row : journal) {
        const auto replayed = strategy->Replay(nlohmann::json::parse(row));
        REQUIRE_MESSAGE(replayed.has_value(), testing::ErrorOf(replayed));
      }
      return strategy;
    }
  };

  TEST_CASE("a state saved without its journal, with the journal replayed, is the whole state and chooses alike") {
    for (const std::string name : kNames) {
      CAPTURE(name);
      const StrategyConfig config = ConfigFor(name);
      Simulation simulation = TwoRoots(5, 1.3);
      SearchGraph& graph = simulation.graph();
      auto original = Make(config);
      std::mt19937_64 rng(17), world(3);
      Stored stored;
      int resumes = 0;
      for (int step = 0; step < 120; ++step) {
        const auto child = simulation.Step(*original, rng);
        REQUIRE(child.has_value());
        if (world() % 4 == 0) original->MarkExhausted(graph.Nodes()[world() % graph.NodeCount()]);
        if (step == 50) original->Revive(graph.Nodes()[0]);  // a no-op unless exhausted
        if (step % 3 == 0 || step % 20 == 0) stored.Save(*original);
        if (step % 20 == 0) {
          auto resumed = stored.Resume(config);
          CHECK(resumed->SaveState() == original->SaveState());
          std::mt19937_64 rng_a = rng, rng_b = rng;
          for (int i = 0; i < 5; ++i) CHECK(resumed->Select(graph, rng_a) == original->Select(graph, rng_b));
          ++resumes;
        }
      }
      CHECK(resumes == 6);
      CHECK(stored.journal.size() > 10);
    }
  }

  TEST_CASE("a journal's snapshot, replayed on a fresh strategy, gives the journaled parts as they are") {
    for (const std::string name : kNames) {
      CAPTURE(name);
      const StrategyConfig config = ConfigFor(name);
      Simulation simulation = TwoRoots(6, 1.2);
      SearchGraph& graph = simulation.graph();
      auto original = Make(config);
      std::mt19937_64 rng(3);
      for (int step = 0; step < 60; ++step) {
        simulation.Step(*original, rng);
        if (step % 4 == 1) original->MarkExhausted(graph.Nodes()[static_cast<std::size_t>(step) % graph.NodeCount()]);
        if (step == 30) original->Revive(graph.Nodes()[1]);
      }
      Stored stored;
      stored.Save(*original);
      stored.journal = {original->JournalSnapshot().dump()};
      CHECK(stored.Resume(config)->SaveState() == original->SaveState());
    }
  }

  TEST_CASE("the state saved with each result stays small as the graph grows; the journal holds what changed") {
    for (const std::string name : {"islands", "graph-ucb", "model"}) {
      CAPTURE(name);
      Simulation simulation(9);
      SearchGraph& graph = simulation.graph();
      for (NodeId id = 1; id <= 4; ++id) Add(graph, id, NodeStatus::kMeasured, 1.0 + 0.1 * static_cast<double>(id));
      auto strategy = Make(ConfigFor(name));
      std::mt19937_64 rng(2);
      std::size_t small_at_100 = 0, largest_row = 0;
      for (int step = 1; step <= 3000; ++step) {
        const auto child = simulation.Step(*strategy, rng);
        REQUIRE(child.has_value());
        if (step % 5 == 0) strategy->MarkExhausted(*child);
        // A selection homes a node, exhausts at most one and, for islands,
        // may send each island's best to the next.
        largest_row = std::max(largest_row, strategy->PendingJournal().size());
        strategy->JournalStored();
        const std::size_t saved = strategy->SaveState(Strategy::StateParts::kWithoutJournal).dump().size();
        if (step == 100) small_at_100 = saved;
        if (step == 3000) {
          CHECK(saved < 2 * small_at_100 + 512);
          CHECK(strategy->SaveState().dump().size() > 8 * saved);  // the whole state: 600 exhausted (and every home)
        }
      }
      CHECK(largest_row <= (name == "islands" ? 5u : 1u));
    }
  }

  TEST_CASE("a state saved whole, as before the journal, is restored and goes on as a journal") {
    for (const std::string name : {"islands", "random", "portfolio"}) {
      CAPTURE(name);
      const StrategyConfig config = ConfigFor(name);
      Simulation simulation(4);
      SearchGraph& graph = simulation.graph();
      Add(graph, 1, NodeStatus::kMeasured, 1.0);
      auto original = Make(config);
      std::mt19937_64 rng(8);
      for (int i = 0; i < 40; ++i) {
        simulation.Step(*original, rng);
        if (i % 6 == 0) original->MarkExhausted(graph.Nodes()[static_cast<std::size_t>(i)]);
      }
      const nlohmann::json whole = original->SaveState();
      auto restored = Make(config);
      REQUIRE(restored->RestoreState(whole).has_value());
      // Its first save stores every exhausted node (and home) as entries.
      Stored stored;
      stored.Save(*restored);
      REQUIRE(stored.journal.size() == 1);
      const nlohmann::json entries = nlohmann::json::parse(stored.journal.front());
      std::size_t exhausted = 0, homes = 0;
      for (const auto& entry : entries) {
        exhausted += entry[0] == "exhausted";
        homes += entry[0] == "home";
      }
      CHECK(exhausted == whole.at("exhausted").size());
      CHECK(homes == (name == "islands" ? whole.at("home").size() : 0u));
      CHECK(stored.Resume(config)->SaveState() == whole);
    }
  }

  TEST_CASE("a revived node is expandable again, and the journal replays exhaustions and revivals in order") {
    auto strategy = Make("greedy");
    SearchGraph graph;
    Add(graph, 1, NodeStatus::kMeasured, 1.0);
    Add(graph, 2, NodeStatus::kMeasured, 2.0);
    std::mt19937_64 rng(1);
    strategy->MarkExhausted(2);
    CHECK(strategy->Select(graph, rng) == NodeId{1});
    strategy->Revive(2);
    CHECK(strategy->Select(graph, rng) == NodeId{2});
    strategy->Revive(2);  // not exhausted: nothing to journal
    CHECK(strategy->PendingJournal() == nlohmann::json::parse(R"([["exhausted", 2], ["revived", 2]])"));

    auto replayed = Make("greedy");
    REQUIRE(replayed->Replay(nlohmann::json::parse(R"([["exhausted", 2], ["revived", 2], ["exhausted", 1]])")));
    CHECK_FALSE(replayed->IsExhausted(2));
    CHECK(replayed->IsExhausted(1));
    CHECK(replayed->Select(graph, rng) == NodeId{2});
    CHECK(replayed->PendingJournal().empty());  // replayed entries are stored already
  }

  TEST_CASE("a malformed journal entry is refused as InvalidArgument and changes nothing") {
    using nlohmann::json;
    struct Bad {
      std::string strategy;
      std::string what;
      json entries;
    };
    const std::vector<Bad> cases = {
        {"graph-ucb", "not an array", json::object()},
        {"graph-ucb", "an entry that is not an array", json::array({"exhausted"})},
        {"graph-ucb", "a node that is a string", json::parse(R"([["exhausted", "7"]])")},
        {"graph-ucb", "an unknown kind", json::parse(R"([["teleported", 7]])")},
        {"graph-ucb", "an islands entry", json::parse(R"([["home", 7, 0]])")},
        {"islands", "a home island out of range", json::parse(R"([["home", 7, 3]])")},
        {"islands", "a home without its island", json::parse(R"([["home", 7]])")},
        {"islands", "good entries, then a bad one", json::parse(R"([["exhausted", 5], ["home", 7, 1], ["home", 8, -1]])")},
        {"islands", "a snapshot's homes with a node and no island", json::parse(R"([["homes", [1, 0, 2]]])")},
        {"islands", "a snapshot's homes with an island out of range", json::parse(R"([["homes", [1, 0, 2, 3]]])")},
        {"islands", "a snapshot's guests that are not a list", json::parse(R"([["guests", 4]])")},
        {"graph-ucb", "a snapshot's exhausted nodes with a string", json::parse(R"([["exhausted_nodes", [1, "2"]]])")},
        {"graph-ucb", "a snapshot's homes", json::parse(R"([["homes", [1, 0]]])")},
    };
    for (const Bad& bad : cases) {
      CAPTURE(bad.strategy);
      CAPTURE(bad.what);
      auto strategy = Make(ConfigFor(bad.strategy));
      REQUIRE(strategy->Replay(json::parse(R"([["exhausted", 3]])")).has_value());
      const json before = strategy->SaveState();
      const auto status = strategy->Replay(bad.entries);
      REQUIRE_FALSE(status.has_value());
      CHECK(status.error().IsInvalidArgument());
      CHECK(status.error().message().find("strategy state") != std::string::npos);
      CHECK(strategy->SaveState() == before);
    }
  }
}
