#include "graph/search_graph.h"

#include <doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace kestrel {
namespace {

GraphNode MakeNode(NodeId id, std::string identity = "") {
  GraphNode node;
  node.id = id;
  node.identity = std::move(identity);
  node.label = "node " + std::to_string(id);
  return node;
}

GraphNode MeasuredNode(NodeId id, double speedup) {
  GraphNode node = MakeNode(id);
  node.status = NodeStatus::kMeasured;
  node.speedup = speedup;
  return node;
}

// `in_bulk` reads as `one_by_one`: edges, journal, children, parents,
// lineages and first parents of nodes 0..NodeCount()-1.
void CheckSameEdges(const SearchGraph& in_bulk, const SearchGraph& one_by_one) {
  REQUIRE(in_bulk.EdgeCount() == one_by_one.EdgeCount());
  REQUIRE(in_bulk.ChangeCount() == one_by_one.ChangeCount());
  for (std::size_t i = 0; i < one_by_one.ChangeCount(); ++i) CHECK(in_bulk.ChangedAt(i) == one_by_one.ChangedAt(i));
  const std::vector<GraphEdge> expected = one_by_one.Edges(), got = in_bulk.Edges();
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(got[i].parent == expected[i].parent);
    CHECK(got[i].child == expected[i].child);
    CHECK(got[i].kind == expected[i].kind);
  }
  for (NodeId id = 0; id < static_cast<NodeId>(one_by_one.NodeCount()); ++id) {
    CAPTURE(id);
    CHECK(in_bulk.Children(id) == one_by_one.Children(id));
    CHECK(in_bulk.Parents(id) == one_by_one.Parents(id));
    CHECK(in_bulk.Lineage(id) == one_by_one.Lineage(id));
    CHECK(in_bulk.FirstParent(id) == one_by_one.FirstParent(id));
    const auto parent = in_bulk.FirstParentAt(in_bulk.IndexOf(id));
    CHECK(parent.has_value() == in_bulk.FirstParent(id).has_value());
    if (parent) CHECK(in_bulk.NodeAt(*parent).id == *in_bulk.FirstParent(id));
  }
}

using Ids = std::vector<NodeId>;

TEST_SUITE("SearchGraph") {
  TEST_CASE("an empty graph") {
    const SearchGraph graph;
    CHECK(graph.NodeCount() == 0);
    CHECK(graph.EdgeCount() == 0);
    CHECK(graph.Nodes().empty());
    CHECK(graph.Edges().empty());
    CHECK(graph.Best(10).empty());
    CHECK_FALSE(graph.Contains(1));
    CHECK_FALSE(graph.FindByIdentity("abc").has_value());
  }

  TEST_CASE("nodes keep their data and their insertion order") {
    SearchGraph graph;
    GraphNode node = MakeNode(5, "hash-5");
    node.label = "BLOCK=4";
    node.mutation = "knob BLOCK 8->4";
    node.status = NodeStatus::kBuilt;
    node.expansions = 3;
    node.run_id = 7;
    graph.AddNode(node);
    graph.AddNode(MakeNode(2));
    graph.AddNode(MakeNode(9));

    CHECK(graph.NodeCount() == 3);
    CHECK(graph.Nodes() == Ids{5, 2, 9});
    CHECK(graph.Contains(2));
    CHECK_FALSE(graph.Contains(3));
    const GraphNode& stored = graph.Node(5);
    CHECK(stored.identity == "hash-5");
    CHECK(stored.label == "BLOCK=4");
    CHECK(stored.mutation == "knob BLOCK 8->4");
    CHECK(stored.status == NodeStatus::kBuilt);
    CHECK_FALSE(stored.speedup.has_value());
    CHECK(stored.expansions == 3);
    CHECK(stored.run_id == 7);

    SUBCASE("a reference from Node() survives later additions") {
      const GraphNode* before = &graph.Node(5);
      for (NodeId id = 100; id < 5000; ++id) graph.AddNode(MakeNode(id));
      CHECK(&graph.Node(5) == before);
      CHECK(before->label == "BLOCK=4");
    }
  }

  TEST_CASE("derivations: children, parents and repeated edges") {
    SearchGraph graph;
    for (NodeId id = 1; id <= 4; ++id) graph.AddNode(MakeNode(id));
    graph.AddDerivation(1, 2, EdgeKind::kDerive);
    graph.AddDerivation(1, 3, EdgeKind::kDerive);
    graph.AddDerivation(3, 4, EdgeKind::kFix);

    CHECK(graph.Children(1) == Ids{2, 3});
    CHECK(graph.Children(2).empty());
    CHECK(graph.Parents(4) == Ids{3});
    CHECK(graph.Parents(1).empty());
    CHECK(graph.EdgeCount() == 3);
    const std::vector<GraphEdge> edges = graph.Edges();
    REQUIRE(edges.size() == 3);
    CHECK(edges[2].parent == 3);
    CHECK(edges[2].child == 4);
    CHECK(edges[2].kind == EdgeKind::kFix);

    SUBCASE("a repeated edge is kept once") {
      graph.AddDerivation(1, 2, EdgeKind::kDerive);
      graph.AddDerivation(3, 4, EdgeKind::kFix);
      CHECK(graph.EdgeCount() == 3);
      CHECK(graph.Children(1) == Ids{2, 3});
    }
    SUBCASE("the same pair with another kind is a second edge, one child") {
      graph.AddDerivation(1, 2, EdgeKind::kDuplicate);
      CHECK(graph.EdgeCount() == 4);
      CHECK(graph.Children(1) == Ids{2, 3});
      CHECK(graph.Parents(2) == Ids{1});
    }
    SUBCASE("a popular parent: repeated edges are found either way") {
      for (NodeId id = 10; id < 1010; ++id) {
        graph.AddNode(MakeNode(id));
        graph.AddDerivation(1, id, EdgeKind::kDerive);
      }
      for (NodeId id = 10; id < 1010; ++id) graph.AddDerivation(1, id, EdgeKind::kDerive);
      graph.AddDerivation(2, 4, EdgeKind::kDerive);
      graph.AddDerivation(2, 4, EdgeKind::kDerive);
      graph.AddDerivation(1, 500, EdgeKind::kDuplicate);  // a second kind: a new edge, no new child
      CHECK(graph.EdgeCount() == 3 + 1000 + 1 + 1);
      const Ids children = graph.Children(1);
      CHECK(children.size() == 1002);
      CHECK(children[0] == 2);
      CHECK(children.back() == 1009);
    }
  }

  TEST_CASE("edges come back in insertion order") {
    SearchGraph graph;
    for (NodeId id = 1; id <= 4; ++id) graph.AddNode(MakeNode(id));
    graph.AddDerivation(3, 4, EdgeKind::kDerive);
    graph.AddDerivation(1, 2, EdgeKind::kDerive);
    graph.AddDerivation(2, 4, EdgeKind::kDuplicate);
    std::vector<std::pair<NodeId, NodeId>> pairs;
    for (const GraphEdge& edge : graph.Edges()) pairs.emplace_back(edge.parent, edge.child);
    CHECK(pairs == std::vector<std::pair<NodeId, NodeId>>{{3, 4}, {1, 2}, {2, 4}});
  }

  TEST_CASE("lineage") {
    SearchGraph graph;
    for (NodeId id = 1; id <= 6; ++id) graph.AddNode(MakeNode(id));
    graph.AddDerivation(1, 2, EdgeKind::kDerive);
    graph.AddDerivation(2, 3, EdgeKind::kDerive);
    graph.AddDerivation(3, 4, EdgeKind::kFix);

    SUBCASE("root first") { CHECK(graph.Lineage(4) == Ids{1, 2, 3, 4}); }
    SUBCASE("a root's lineage is itself") {
      CHECK(graph.Lineage(1) == Ids{1});
      CHECK(graph.Lineage(6) == Ids{6});
    }
    SUBCASE("a node with two parents follows the oldest edge") {
      // 5 is a root with a lower id than 3's ancestors would suggest; the
      // edge 5 -> 4 comes second, so 4 still descends from 3.
      graph.AddDerivation(5, 4, EdgeKind::kDuplicate);
      CHECK(graph.Parents(4) == Ids{3, 5});
      CHECK(graph.Lineage(4) == Ids{1, 2, 3, 4});
      // The other way round: 6's first parent is 5, its second 2.
      graph.AddDerivation(5, 6, EdgeKind::kDerive);
      graph.AddDerivation(2, 6, EdgeKind::kDerive);
      CHECK(graph.Lineage(6) == Ids{5, 6});
    }
  }

  TEST_CASE("best: ordering, ties and updates") {
    SearchGraph graph;
    graph.AddNode(MeasuredNode(1, 1.5));
    graph.AddNode(MeasuredNode(2, 3.0));
    graph.AddNode(MeasuredNode(3, 1.5));
    graph.AddNode(MeasuredNode(4, 0.5));
    graph.AddNode(MakeNode(5));  // proposed: never ranked

    CHECK(graph.Best(10) == Ids{2, 1, 3, 4});
    CHECK(graph.Best(2) == Ids{2, 1});
    CHECK(graph.Best(0).empty());

    SUBCASE("ties go to the lower id whatever the insertion order") {
      graph.AddNode(MeasuredNode(0, 1.5));
      CHECK(graph.Best(4) == Ids{2, 0, 1, 3});
    }
    SUBCASE("a node whose result changes moves in the ranking") {
      graph.SetResult(4, NodeStatus::kMeasured, 5.0);
      CHECK(graph.Best(10) == Ids{4, 2, 1, 3});
      graph.SetResult(2, NodeStatus::kMeasured, 1.0);
      CHECK(graph.Best(10) == Ids{4, 1, 3, 2});
      graph.SetResult(5, NodeStatus::kMeasured, 2.0);
      CHECK(graph.Best(10) == Ids{4, 5, 1, 3, 2});
      CHECK(graph.Node(5).speedup == 2.0);
    }
    SUBCASE("failed nodes never appear") {
      graph.SetResult(2, NodeStatus::kWrong, std::nullopt);
      graph.SetResult(5, NodeStatus::kBuildFailed, std::nullopt);
      CHECK(graph.Best(10) == Ids{1, 3, 4});
      CHECK(graph.Node(2).status == NodeStatus::kWrong);
      CHECK_FALSE(graph.Node(2).speedup.has_value());
      graph.AddNode(MakeNode(6));
      graph.SetResult(6, NodeStatus::kTimedOut, std::nullopt);
      graph.SetResult(6, NodeStatus::kCrashed, std::nullopt);
      CHECK(graph.Best(10) == Ids{1, 3, 4});
    }
    SUBCASE("a measured node without a speedup is not ranked") {
      graph.SetResult(5, NodeStatus::kMeasured, std::nullopt);
      CHECK(graph.Best(10) == Ids{2, 1, 3, 4});
    }
    SUBCASE("setting the same result twice changes nothing") {
      graph.SetResult(1, NodeStatus::kMeasured, 1.5);
      graph.SetResult(1, NodeStatus::kMeasured, 1.5);
      CHECK(graph.Best(10) == Ids{2, 1, 3, 4});
    }
  }

  TEST_CASE("FindByIdentity") {
    SearchGraph graph;
    graph.AddNode(MakeNode(1, "aaa"));
    graph.AddNode(MakeNode(2, "bbb"));
    graph.AddNode(MakeNode(3, "aaa"));  // a duplicate keeps the first node
    graph.AddNode(MakeNode(4, ""));
    CHECK(graph.FindByIdentity("aaa") == NodeId{1});
    CHECK(graph.FindByIdentity("bbb") == NodeId{2});
    CHECK_FALSE(graph.FindByIdentity("ccc").has_value());
    CHECK_FALSE(graph.FindByIdentity("").has_value());  // no identity is not an identity
  }

  TEST_CASE("expansions are counted") {
    SearchGraph graph;
    graph.AddNode(MakeNode(1));
    CHECK(graph.Node(1).expansions == 0);
    graph.NoteExpansion(1);
    graph.NoteExpansion(1);
    CHECK(graph.Node(1).expansions == 2);
  }

  TEST_CASE("a moved graph keeps everything") {
    SearchGraph graph;
    graph.AddNode(MeasuredNode(1, 2.0));
    graph.AddNode(MakeNode(2, "two"));
    graph.AddDerivation(1, 2, EdgeKind::kDerive);
    SearchGraph moved(std::move(graph));
    CHECK(moved.Lineage(2) == Ids{1, 2});
    SearchGraph assigned;
    assigned = std::move(moved);
    CHECK(assigned.Best(1) == Ids{1});
    CHECK(assigned.FindByIdentity("two") == NodeId{2});
  }

  TEST_CASE("ids near and far: a store's dense ids, a late graph's large ones, zero and negative ones") {
    SearchGraph graph;
    graph.Reserve(4);
    const Ids ids{3, 1, 2, 4'000'000'000'000, 0, 70'000, -5, 5, 1'000'000};
    for (const NodeId id : ids) graph.AddNode(MeasuredNode(id, static_cast<double>(id % 97) + 100.0));
    for (NodeId previous = 0; const NodeId id : ids) {
      CAPTURE(id);
      REQUIRE(graph.Contains(id));
      CHECK(graph.Node(id).id == id);
      CHECK(graph.NodeAt(graph.IndexOf(id)).id == id);
      if (id != ids.front()) graph.AddDerivation(previous, id, EdgeKind::kDerive);
      previous = id;
    }
    CHECK(graph.Nodes() == ids);
    CHECK(graph.Lineage(1'000'000) == ids);
    for (const NodeId absent : {NodeId{6}, NodeId{-1}, NodeId{69'999}, NodeId{4'000'000'000'001}}) {
      CHECK_FALSE(graph.Contains(absent));
    }
  }

  TEST_CASE("the ranking agrees with brute force while nodes arrive between reads") {
    std::mt19937_64 random(99);
    SearchGraph graph;
    std::map<NodeId, double> ranked;
    NodeId next = 1;
    for (int round = 0; round < 300; ++round) {
      // A batch (a loaded graph, then a run's single nodes), some updates, a read.
      const int batch = round == 0 ? 2000 : static_cast<int>(random() % 3);
      for (int i = 0; i < batch; ++i, ++next) {
        const double speedup = static_cast<double>(random() % 100) / 25.0;
        graph.AddNode(MeasuredNode(next, speedup));
        ranked[next] = speedup;
      }
      for (int i = 0; i < 2; ++i) {
        const NodeId id = 1 + static_cast<NodeId>(random() % static_cast<std::uint64_t>(next - 1));
        if (random() % 4 == 0) {
          graph.SetResult(id, NodeStatus::kWrong, std::nullopt);
          ranked.erase(id);
        } else {
          const double speedup = static_cast<double>(random() % 100) / 25.0;
          graph.SetResult(id, NodeStatus::kMeasured, speedup);
          ranked[id] = speedup;
        }
      }
      std::vector<std::pair<double, NodeId>> expected;
      for (const auto& [id, speedup] : ranked) expected.emplace_back(-speedup, id);
      std::sort(expected.begin(), expected.end());
      Ids brute;
      for (std::size_t i = 0; i < std::min<std::size_t>(50, expected.size()); ++i) brute.push_back(expected[i].second);
      CHECK(graph.Best(50) == brute);
    }
  }

  TEST_CASE("edges added in one call: the graph of the same edges added one by one") {
    // A loaded graph's edges in compressed rows must read as Boost's: the
    // same children, parents, lineages, edge order and journal, with repeats
    // (a popular parent's long row among them) dropped, and later edges,
    // repeats of loaded ones included, added on top.
    constexpr NodeId kNodes = 3000;
    std::mt19937_64 random(17);
    std::vector<GraphEdge> edges;
    for (NodeId id = 1; id < kNodes; ++id) {
      if (random() % 40 == 0) continue;  // a few extra roots
      const NodeId parent = random() % 3 == 0 ? 0 : static_cast<NodeId>(random() % static_cast<std::uint64_t>(id));
      edges.push_back({parent, id, random() % 5 == 0 ? EdgeKind::kFix : EdgeKind::kDerive});
      if (random() % 6 == 0) edges.push_back(edges[random() % edges.size()]);  // a repeat
      if (random() % 8 == 0) {  // an edge that made nothing, older than the child's derivation or not
        const NodeId other = static_cast<NodeId>(random() % static_cast<std::uint64_t>(kNodes));
        if (other != id) edges.push_back({other, id, random() % 2 ? EdgeKind::kDuplicate : EdgeKind::kSameCode});
      }
    }
    std::shuffle(edges.begin() + static_cast<std::ptrdiff_t>(edges.size() / 2), edges.end(), random);
    SearchGraph one_by_one;
    SearchGraph in_bulk;
    for (NodeId id = 0; id < kNodes; ++id) {
      one_by_one.AddNode(MakeNode(id));
      in_bulk.AddNode(MakeNode(id));
    }
    for (const GraphEdge& edge : edges) one_by_one.AddDerivation(edge.parent, edge.child, edge.kind);
    in_bulk.AddDerivations(edges);

    const auto same = [&] { CheckSameEdges(in_bulk, one_by_one); };
    CHECK(in_bulk.EdgeCount() < edges.size());  // repeats were dropped
    CHECK(in_bulk.Children(0).size() > 500);    // a long row
    same();

    SUBCASE("edges and nodes added after the load") {
      for (NodeId id = kNodes; id < kNodes + 200; ++id) {
        one_by_one.AddNode(MakeNode(id));
        in_bulk.AddNode(MakeNode(id));
      }
      for (int i = 0; i < 600; ++i) {
        // A new node's derivation from an older one (no cycle), an edge
        // that made nothing, or a repeat of a loaded edge.
        const NodeId child = kNodes + static_cast<NodeId>(random() % 200);
        const GraphEdge edge = i % 3 == 0 ? edges[random() % edges.size()]
                                          : GraphEdge{static_cast<NodeId>(random() % static_cast<std::uint64_t>(child)),
                                                      child, i % 2 ? EdgeKind::kDerive : EdgeKind::kDuplicate};
        one_by_one.AddDerivation(edge.parent, edge.child, edge.kind);
        in_bulk.AddDerivation(edge.parent, edge.child, edge.kind);
      }
      same();
    }
    SUBCASE("a second call adds one edge after another") {
      const std::vector<GraphEdge> more = {{5, 7, EdgeKind::kDuplicate}, edges.front(), {9, 3, EdgeKind::kSameCode}};
      for (const GraphEdge& edge : more) one_by_one.AddDerivation(edge.parent, edge.child, edge.kind);
      in_bulk.AddDerivations(more);
      same();
    }
  }

  TEST_CASE("edges added in one call without a repeat: the graph of the same edges added one by one") {
    // A node with one parent and a few edges that made nothing, none twice:
    // no row holds a repeat, so none is looked for.
    std::mt19937_64 random(23);
    std::vector<GraphEdge> edges;
    for (NodeId id = 1; id < 2000; ++id) {
      const NodeId parent = static_cast<NodeId>(random() % static_cast<std::uint64_t>(id));
      edges.push_back({parent, id, id % 7 == 0 ? EdgeKind::kFix : EdgeKind::kDerive});
      if (id % 11 == 0 && parent + 1 < id) edges.push_back({parent + 1, id, EdgeKind::kDuplicate});
    }
    SearchGraph one_by_one, in_bulk;
    for (NodeId id = 0; id < 2000; ++id) {
      one_by_one.AddNode(MakeNode(id));
      in_bulk.AddNode(MakeNode(id));
    }
    for (const GraphEdge& edge : edges) one_by_one.AddDerivation(edge.parent, edge.child, edge.kind);
    in_bulk.AddDerivations(edges);
    CHECK(in_bulk.EdgeCount() == edges.size());
    CheckSameEdges(in_bulk, one_by_one);
  }

  TEST_CASE("a 10k-node random graph agrees with brute force") {
    constexpr NodeId kNodes = 10000;
    std::mt19937_64 random(20240607);
    SearchGraph graph;
    std::map<NodeId, std::vector<NodeId>> parents;  // in insertion order
    std::map<NodeId, std::optional<double>> ranked;
    for (NodeId id = 0; id < kNodes; ++id) {
      graph.AddNode(MakeNode(id, "identity-" + std::to_string(id)));
      if (id == 0 || random() % 50 == 0) continue;  // a few extra roots
      const int count = 1 + static_cast<int>(random() % 3);
      for (int i = 0; i < count; ++i) {
        const NodeId parent = static_cast<NodeId>(random() % static_cast<std::uint64_t>(id));
        graph.AddDerivation(parent, id, random() % 4 == 0 ? EdgeKind::kFix : EdgeKind::kDerive);
        auto& list = parents[id];
        if (std::find(list.begin(), list.end(), parent) == list.end()) list.push_back(parent);
      }
    }
    // 30k result updates over few distinct values, so ties abound.
    const NodeStatus kStatuses[] = {NodeStatus::kMeasured, NodeStatus::kWrong,
                                    NodeStatus::kBuildFailed, NodeStatus::kBuilt};
    for (int i = 0; i < 30000; ++i) {
      const NodeId id = static_cast<NodeId>(random() % kNodes);
      const NodeStatus status = kStatuses[random() % 4];
      std::optional<double> speedup;
      if (status == NodeStatus::kMeasured && random() % 10 != 0) {
        speedup = static_cast<double>(random() % 200) / 50.0;
      }
      graph.SetResult(id, status, speedup);
      ranked[id] = speedup;
    }

    std::vector<std::pair<double, NodeId>> expected;
    for (const auto& [id, speedup] : ranked) {
      if (speedup) expected.emplace_back(-*speedup, id);
    }
    std::sort(expected.begin(), expected.end());
    for (const std::size_t k : {0, 1, 10, 137, 5000, 20000}) {
      Ids brute;
      for (std::size_t i = 0; i < std::min(k, expected.size()); ++i) {
        brute.push_back(expected[i].second);
      }
      CHECK(graph.Best(k) == brute);
    }

    for (int i = 0; i < 200; ++i) {
      const NodeId id = static_cast<NodeId>(random() % kNodes);
      Ids lineage{id};
      while (parents.contains(lineage.back())) lineage.push_back(parents[lineage.back()].front());
      std::reverse(lineage.begin(), lineage.end());
      CHECK(graph.Lineage(id) == lineage);
      CHECK(graph.Parents(id) == (parents.contains(id) ? parents[id] : Ids{}));
    }
    CHECK(graph.FindByIdentity("identity-4321") == NodeId{4321});
  }
}

}  // namespace
}  // namespace kestrel
