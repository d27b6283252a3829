#include "graph/search_graph.h"

#include <boost/graph/adjacency_list.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/check.h"

// Layout, flat for graphs of a million nodes (each allocation and page fault
// counts when a resumed graph loads): the Boost graph holds the structure only
// (a vertex per node, an edge per derivation with its kind, its edge list a
// vector); the GraphNode data lives in fixed-size chunks indexed by the vertex
// descriptor, so references returned by Node() stay valid while nodes are
// added (and identities can be indexed without a copy). Ids map to vertices
// through a table indexed by the id itself (store ids are dense) with a hash
// map for the ids it would be wasteful to hold. An ordered set ranks the
// measured nodes; nodes added since the last ranked read wait in a vector and
// enter it sorted, in one pass. A vector remembers edges in insertion order.

namespace kestrel {
namespace {

struct EdgeData {
  EdgeKind kind = EdgeKind::kDerive;
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS,
                                    boost::no_property, EdgeData, boost::no_property, boost::vecS>;
using Vertex = Graph::vertex_descriptor;

// An edge as added (descriptors of a vector edge list do not outlive its growth).
struct StoredEdge {
  Vertex parent;
  Vertex child;
  EdgeKind kind;
};

// GraphNodes in chunks of fixed capacity: a node never moves once added.
class NodeChunks {
 public:
  GraphNode& Add(const GraphNode& node) {
    if (chunks_.empty() || chunks_.back().size() == kChunk) {
      chunks_.emplace_back().reserve(kChunk);  // untouched memory until used
    }
    ++size_;
    return chunks_.back().emplace_back(node);
  }
  GraphNode& operator[](std::size_t index) { return chunks_[index / kChunk][index % kChunk]; }
  const GraphNode& operator[](std::size_t index) const { return chunks_[index / kChunk][index % kChunk]; }
  std::size_t size() const { return size_; }

 private:
  static constexpr std::size_t kChunk = std::size_t{1} << 14;
  std::vector<std::vector<GraphNode>> chunks_;
  std::size_t size_ = 0;
};

// NodeId -> vertex. Store ids count up from 1 across a store's graphs, so a
// table indexed by the id holds most graphs' ids in 4 bytes each; an id far
// past the graph's size (a late graph of a shared store, a test's made-up
// id) goes to the hash map instead.
class VertexTable {
 public:
  // `count`: the nodes held before this one.
  void Add(NodeId id, Vertex vertex, std::size_t count) {
    const auto limit = static_cast<NodeId>(kSlack + 4 * (count + 1));
    if (id >= 0 && id < limit && vertex < UINT32_MAX) {
      const auto slot = static_cast<std::size_t>(id);
      if (slot >= dense_.size()) {
        dense_.resize(std::max(slot + 1, std::min(2 * dense_.size(), static_cast<std::size_t>(limit))));
      }
      dense_[slot] = static_cast<std::uint32_t>(vertex) + 1;
    } else {
      sparse_.emplace(id, vertex);
    }
  }
  std::optional<Vertex> Find(NodeId id) const {
    if (id >= 0 && static_cast<std::size_t>(id) < dense_.size() && dense_[static_cast<std::size_t>(id)] != 0) {
      return dense_[static_cast<std::size_t>(id)] - 1;
    }
    if (sparse_.empty()) return std::nullopt;
    const auto it = sparse_.find(id);
    if (it == sparse_.end()) return std::nullopt;
    return it->second;
  }
  void Reserve(std::size_t nodes) { dense_.reserve(nodes + kSlack); }

 private:
  static constexpr std::size_t kSlack = 4096;
  std::vector<std::uint32_t> dense_;  // id -> vertex + 1; 0: none
  std::unordered_map<NodeId, Vertex> sparse_;
};

// A ranked node: best first, ties broken by the lower id.
struct RankKey {
  double speedup;
  NodeId id;
};

struct BetterFirst {
  bool operator()(const RankKey& a, const RankKey& b) const {
    if (a.speedup != b.speedup) return a.speedup > b.speedup;
    return a.id < b.id;
  }
};

// Whether a node takes part in Best(): measured, with a speedup.
bool IsRanked(const GraphNode& node) {
  return node.status == NodeStatus::kMeasured && node.speedup.has_value();
}

void CheckResult(NodeStatus status, const std::optional<double>& speedup) {
  KESTREL_CHECK(!speedup || status == NodeStatus::kMeasured,
                "a speedup is only set on a measured node");
  KESTREL_CHECK(!speedup || !std::isnan(*speedup), "a speedup must not be NaN");
}

// Drops repeated ids, keeping the first of each: edges of two kinds may join
// the same pair of nodes, which are still one parent and one child.
void DropRepeats(std::vector<NodeId>& ids) {
  constexpr std::size_t kScanLimit = 32;  // up to here a scan beats hashing
  std::size_t kept = 0;
  if (ids.size() <= kScanLimit) {
    for (const NodeId id : ids) {
      if (std::find(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(kept), id) ==
          ids.begin() + static_cast<std::ptrdiff_t>(kept)) {
        ids[kept++] = id;
      }
    }
  } else {
    std::unordered_set<NodeId> seen;
    for (const NodeId id : ids) {
      if (seen.insert(id).second) ids[kept++] = id;
    }
  }
  ids.resize(kept);
}

std::string Describe(const char* what, NodeId id) {
  return std::string(what) + " (node " + std::to_string(id) + ")";
}

}  // namespace

struct SearchGraph::Impl {
  Graph graph;
  NodeChunks nodes;  // indexed by Vertex; stable references
  VertexTable vertex_of;
  // The first node added with each non-empty identity; the keys view the
  // identities held in `nodes`, which never move or change.
  std::unordered_map<std::string_view, NodeId> by_identity;
  // The ranked nodes: `ranking`, and those added since the last read that
  // needed it (Settle moves them in). Mutable: a const reader settles.
  mutable std::set<RankKey, BetterFirst> ranking;
  mutable std::vector<RankKey> unsettled;
  std::vector<StoredEdge> edge_order;
  std::vector<NodeId> changes;  // the journal (ChangeCount)

  Vertex VertexOf(NodeId id) const {
    const auto vertex = vertex_of.Find(id);
    KESTREL_CHECK(vertex.has_value(), Describe("unknown node id", id).c_str());
    return *vertex;
  }

  // Sorted first, the waiting nodes enter the set each next to the last
  // (all at once into an empty one): linear, where inserting them one by
  // one as they came would search the tree for each.
  void Settle() const {
    if (unsettled.empty()) return;
    std::sort(unsettled.begin(), unsettled.end(), BetterFirst());
    if (ranking.empty()) {
      ranking.insert(unsettled.begin(), unsettled.end());
    } else {
      auto hint = ranking.begin();
      for (const RankKey& key : unsettled) hint = std::next(ranking.insert(hint, key));
    }
    unsettled.clear();
  }

  bool HasEdge(Vertex parent, Vertex child, EdgeKind kind) const {
    // Scan the shorter of the two adjacency lists: a popular parent may have
    // thousands of children, while a child has few parents (and vice versa).
    if (boost::out_degree(parent, graph) <= boost::in_degree(child, graph)) {
      for (const auto& edge : boost::make_iterator_range(boost::out_edges(parent, graph))) {
        if (boost::target(edge, graph) == child && graph[edge].kind == kind) return true;
      }
    } else {
      for (const auto& edge : boost::make_iterator_range(boost::in_edges(child, graph))) {
        if (boost::source(edge, graph) == parent && graph[edge].kind == kind) return true;
      }
    }
    return false;
  }
};

SearchGraph::SearchGraph() : impl_(std::make_unique<Impl>()) {}
SearchGraph::~SearchGraph() = default;
SearchGraph::SearchGraph(SearchGraph&&) noexcept = default;
SearchGraph& SearchGraph::operator=(SearchGraph&&) noexcept = default;

void SearchGraph::AddNode(const GraphNode& node) {
  CheckResult(node.status, node.speedup);
  KESTREL_CHECK(!impl_->vertex_of.Find(node.id), Describe("duplicate node id", node.id).c_str());
  const std::size_t count = impl_->nodes.size();
  impl_->vertex_of.Add(node.id, boost::add_vertex(impl_->graph), count);
  const GraphNode& stored = impl_->nodes.Add(node);
  if (!stored.identity.empty()) impl_->by_identity.emplace(stored.identity, stored.id);
  if (IsRanked(node)) impl_->unsettled.push_back({*node.speedup, node.id});
}

void SearchGraph::Reserve(std::size_t nodes, std::size_t edges) {
  // And room to grow: a run adds nodes one at a time, and the first of them
  // would otherwise move every array a loaded graph just filled.
  nodes += nodes / 8 + 1024;
  edges += edges / 8 + 1024;
  impl_->vertex_of.Reserve(nodes);
  impl_->graph.m_vertices.reserve(nodes);
  impl_->graph.m_edges.reserve(edges);
  impl_->edge_order.reserve(edges);
  impl_->changes.reserve(edges);
}

void SearchGraph::AddDerivation(NodeId parent, NodeId child, EdgeKind kind) {
  KESTREL_CHECK(parent != child, Describe("a node cannot derive from itself", child).c_str());
  const Vertex from = impl_->VertexOf(parent);
  const Vertex to = impl_->VertexOf(child);
  if (impl_->HasEdge(from, to, kind)) return;
  const bool added = boost::add_edge(from, to, EdgeData{kind}, impl_->graph).second;
  KESTREL_CHECK(added, "boost::add_edge refused an edge");
  impl_->edge_order.push_back({from, to, kind});
  impl_->changes.push_back(child);
}

bool SearchGraph::Contains(NodeId id) const { return impl_->vertex_of.Find(id).has_value(); }

std::optional<NodeId> SearchGraph::FindByIdentity(const std::string& identity) const {
  const auto it = impl_->by_identity.find(identity);
  if (it == impl_->by_identity.end()) return std::nullopt;
  return it->second;
}

const GraphNode& SearchGraph::Node(NodeId id) const { return impl_->nodes[impl_->VertexOf(id)]; }

void SearchGraph::SetResult(NodeId id, NodeStatus status, std::optional<double> speedup) {
  CheckResult(status, speedup);
  GraphNode& node = impl_->nodes[impl_->VertexOf(id)];
  impl_->Settle();
  if (IsRanked(node)) impl_->ranking.erase({*node.speedup, node.id});
  node.status = status;
  node.speedup = speedup;
  if (IsRanked(node)) impl_->ranking.insert({*node.speedup, node.id});
  impl_->changes.push_back(id);
}

void SearchGraph::NoteExpansion(NodeId id) {
  ++impl_->nodes[impl_->VertexOf(id)].expansions;
  impl_->changes.push_back(id);
}

std::vector<NodeId> SearchGraph::Children(NodeId id) const {
  const Graph& graph = impl_->graph;
  std::vector<NodeId> children;
  for (const auto& edge : boost::make_iterator_range(boost::out_edges(impl_->VertexOf(id), graph))) {
    children.push_back(impl_->nodes[boost::target(edge, graph)].id);
  }
  DropRepeats(children);
  return children;
}

std::vector<NodeId> SearchGraph::Parents(NodeId id) const {
  const Graph& graph = impl_->graph;
  std::vector<NodeId> parents;
  for (const auto& edge : boost::make_iterator_range(boost::in_edges(impl_->VertexOf(id), graph))) {
    parents.push_back(impl_->nodes[boost::source(edge, graph)].id);
  }
  DropRepeats(parents);
  return parents;
}

std::optional<NodeId> SearchGraph::FirstParent(NodeId id) const {
  const Graph& graph = impl_->graph;
  auto [edge, last] = boost::in_edges(impl_->VertexOf(id), graph);
  while (edge != last && !MadeChild(graph[*edge].kind)) ++edge;
  if (edge == last) return std::nullopt;
  return impl_->nodes[boost::source(*edge, graph)].id;
}

std::vector<NodeId> SearchGraph::Lineage(NodeId id) const {
  const Graph& graph = impl_->graph;
  const std::size_t vertex_count = boost::num_vertices(graph);
  std::vector<NodeId> path;
  Vertex vertex = impl_->VertexOf(id);
  for (;;) {
    path.push_back(impl_->nodes[vertex].id);
    // A path longer than the graph has nodes has gone round a cycle.
    KESTREL_CHECK(path.size() <= vertex_count, Describe("first parents form a cycle", id).c_str());
    // The oldest derivation (in-edges keep insertion order); "duplicate"
    // and "same_code" edges point at an existing node, not at its origin.
    auto [edge, last] = boost::in_edges(vertex, graph);
    while (edge != last && !MadeChild(graph[*edge].kind)) ++edge;
    if (edge == last) break;  // a root
    vertex = boost::source(*edge, graph);
  }
  return {path.rbegin(), path.rend()};
}

std::vector<NodeId> SearchGraph::Best(std::size_t k) const {
  impl_->Settle();
  std::vector<NodeId> best;
  best.reserve(std::min(k, impl_->ranking.size()));
  for (const RankKey& key : impl_->ranking) {
    if (best.size() == k) break;
    best.push_back(key.id);
  }
  return best;
}

std::vector<NodeId> SearchGraph::Nodes() const {
  std::vector<NodeId> ids;
  ids.reserve(impl_->nodes.size());
  for (std::size_t i = 0; i < impl_->nodes.size(); ++i) ids.push_back(impl_->nodes[i].id);
  return ids;
}

std::vector<GraphEdge> SearchGraph::Edges() const {
  std::vector<GraphEdge> edges;
  edges.reserve(impl_->edge_order.size());
  for (const StoredEdge& edge : impl_->edge_order) {
    edges.push_back({impl_->nodes[edge.parent].id, impl_->nodes[edge.child].id, edge.kind});
  }
  return edges;
}

const GraphNode& SearchGraph::NodeAt(std::size_t index) const {
  KESTREL_CHECK(index < impl_->nodes.size(), "a node index past the graph");
  return impl_->nodes[index];
}

std::size_t SearchGraph::IndexOf(NodeId id) const { return impl_->VertexOf(id); }

void SearchGraph::VisitRanked(const std::function<bool(NodeId)>& visit) const {
  impl_->Settle();
  for (const RankKey& key : impl_->ranking) {
    if (!visit(key.id)) return;
  }
}

std::size_t SearchGraph::ChangeCount() const { return impl_->changes.size(); }
NodeId SearchGraph::ChangedAt(std::size_t index) const {
  KESTREL_CHECK(index < impl_->changes.size(), "a change index past the journal");
  return impl_->changes[index];
}

std::size_t SearchGraph::NodeCount() const { return impl_->nodes.size(); }
std::size_t SearchGraph::EdgeCount() const { return impl_->edge_order.size(); }

}  // namespace kestrel
