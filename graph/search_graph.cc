#include "graph/search_graph.h"

#include <boost/graph/adjacency_list.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/check.h"

// Layout: the Boost graph holds the structure only (a vertex per node, an edge
// per derivation with its kind); the GraphNode data lives in a deque indexed
// by the vertex descriptor, so references returned by Node() stay valid while
// nodes are added (and identities can be indexed without a copy). Two hash maps translate ids and identities, an ordered set
// ranks the measured nodes, and a vector remembers edges in insertion order.

namespace kestrel {
namespace {

struct EdgeData {
  EdgeKind kind = EdgeKind::kDerive;
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS,
                                    boost::no_property, EdgeData>;
using Vertex = Graph::vertex_descriptor;
using EdgeDescriptor = Graph::edge_descriptor;

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
  std::deque<GraphNode> nodes;  // indexed by Vertex; stable references
  std::unordered_map<NodeId, Vertex> vertex_of;
  // The first node added with each non-empty identity; the keys view the
  // identities held in `nodes`, which never move or change.
  std::unordered_map<std::string_view, NodeId> by_identity;
  std::set<RankKey, BetterFirst> ranking;
  std::vector<EdgeDescriptor> edge_order;
  std::vector<NodeId> changes;  // the journal (ChangeCount)

  Vertex VertexOf(NodeId id) const {
    const auto it = vertex_of.find(id);
    KESTREL_CHECK(it != vertex_of.end(), Describe("unknown node id", id).c_str());
    return it->second;
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
  const auto [slot, inserted] = impl_->vertex_of.try_emplace(node.id);
  KESTREL_CHECK(inserted, Describe("duplicate node id", node.id).c_str());
  slot->second = boost::add_vertex(impl_->graph);
  const GraphNode& stored = impl_->nodes.emplace_back(node);
  if (!stored.identity.empty()) impl_->by_identity.emplace(stored.identity, stored.id);
  if (IsRanked(node)) impl_->ranking.insert({*node.speedup, node.id});
}

void SearchGraph::Reserve(std::size_t nodes) {
  impl_->vertex_of.reserve(nodes);
  impl_->graph.m_vertices.reserve(nodes);
}

void SearchGraph::AddDerivation(NodeId parent, NodeId child, EdgeKind kind) {
  KESTREL_CHECK(parent != child, Describe("a node cannot derive from itself", child).c_str());
  const Vertex from = impl_->VertexOf(parent);
  const Vertex to = impl_->VertexOf(child);
  if (impl_->HasEdge(from, to, kind)) return;
  const auto [edge, added] = boost::add_edge(from, to, EdgeData{kind}, impl_->graph);
  KESTREL_CHECK(added, "boost::add_edge refused an edge");
  impl_->edge_order.push_back(edge);
  impl_->changes.push_back(child);
}

bool SearchGraph::Contains(NodeId id) const { return impl_->vertex_of.contains(id); }

std::optional<NodeId> SearchGraph::FindByIdentity(const std::string& identity) const {
  const auto it = impl_->by_identity.find(identity);
  if (it == impl_->by_identity.end()) return std::nullopt;
  return it->second;
}

const GraphNode& SearchGraph::Node(NodeId id) const { return impl_->nodes[impl_->VertexOf(id)]; }

void SearchGraph::SetResult(NodeId id, NodeStatus status, std::optional<double> speedup) {
  CheckResult(status, speedup);
  GraphNode& node = impl_->nodes[impl_->VertexOf(id)];
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
  for (const GraphNode& node : impl_->nodes) ids.push_back(node.id);
  return ids;
}

std::vector<GraphEdge> SearchGraph::Edges() const {
  const Graph& graph = impl_->graph;
  std::vector<GraphEdge> edges;
  edges.reserve(impl_->edge_order.size());
  for (const EdgeDescriptor& edge : impl_->edge_order) {
    edges.push_back({impl_->nodes[boost::source(edge, graph)].id,
                     impl_->nodes[boost::target(edge, graph)].id, graph[edge].kind});
  }
  return edges;
}

const GraphNode& SearchGraph::NodeAt(std::size_t index) const {
  KESTREL_CHECK(index < impl_->nodes.size(), "a node index past the graph");
  return impl_->nodes[index];
}

std::size_t SearchGraph::IndexOf(NodeId id) const { return impl_->VertexOf(id); }

void SearchGraph::VisitRanked(const std::function<bool(NodeId)>& visit) const {
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
