#include "graph/search_graph.h"

#include <boost/graph/adjacency_list.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/check.h"
#include "core/huge_pages.h"
#include "graph/edge_rows.h"
#include "graph/lazy_ranking.h"

// Layout, flat for graphs of a million nodes (each allocation and page fault
// counts when a resumed graph loads): the Boost graph holds the structure only
// (a vertex per node, an edge per derivation with its kind, its edge list a
// vector); the edges of a loaded graph (AddDerivations on a graph without
// edges) are kept beside it in compressed rows (an array of each node's
// children, one of its parents: no allocation per node), older than any
// edge Boost holds. Each node's first parent (Lineage's step) is kept in an
// array. The GraphNode data lives in fixed-size chunks indexed by the vertex
// descriptor, so references returned by Node() stay valid while nodes are
// added (and identities can be indexed without a copy). Ids map to vertices
// through a table indexed by the id itself (store ids are dense) with a hash
// map for the ids it would be wasteful to hold. The measured nodes the first
// ranked read finds (a loaded graph's) are ranked by a heap that is sorted
// only as far as reads go; later ones by an ordered set, which nodes added
// since the last ranked read enter sorted, in one pass. A vector remembers
// edges in insertion order.

namespace kestrel {
namespace {

using graph_rows::EdgeRows;
using graph_rows::StoredEdge;

struct EdgeData {
  EdgeKind kind = EdgeKind::kDerive;
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS,
                                    boost::no_property, EdgeData, boost::no_property, boost::vecS>;
using Vertex = Graph::vertex_descriptor;
static_assert(std::is_same_v<Vertex, std::size_t>, "EdgeRows and StoredEdge hold vertex indexes");

constexpr std::uint32_t kNoParent = UINT32_MAX;

// GraphNodes in chunks of fixed capacity: a node never moves once added.
class NodeChunks {
 public:
  GraphNode& Add(const GraphNode& node) {
    if (chunks_.empty() || chunks_.back().size() == kChunk) {
      // Untouched memory until used; past the first chunk (a large graph),
      // in huge pages.
      if (chunks_.empty()) {
        chunks_.emplace_back().reserve(kChunk);
      } else {
        ReserveHuge(chunks_.emplace_back(), kChunk);
      }
    }
    ++size_;
    return chunks_.back().emplace_back(node);
  }
  GraphNode& operator[](std::size_t index) { return chunks_[index / kChunk][index % kChunk]; }
  const GraphNode& operator[](std::size_t index) const { return chunks_[index / kChunk][index % kChunk]; }
  std::size_t size() const { return size_; }

 private:
  static constexpr std::size_t kChunk = std::size_t{1} << 16;
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
  void Reserve(std::size_t nodes) { ReserveHuge(dense_, nodes + kSlack); }

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
constexpr std::size_t kScanLimit = 32;  // up to here a scan beats hashing

void DropRepeats(std::vector<NodeId>& ids) {
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
  // The ranked nodes (slots: vertices): `ranking`, and those added since the
  // last read that needed it (Settle moves them in). Mutable: a const reader
  // settles.
  using Ranking = LazyRanking<RankKey, BetterFirst>;
  mutable Ranking ranking;
  mutable std::vector<Ranking::Slotted> unsettled;
  EdgeRows loaded_children, loaded_parents;  // the loaded edges (AddDerivations)
  std::vector<std::uint32_t> first_parent;   // by vertex: FirstParent's vertex, or kNoParent
  std::vector<StoredEdge> edge_order;
  std::vector<NodeId> changes;  // the journal (ChangeCount)

  Vertex VertexOf(NodeId id) const {
    const auto vertex = vertex_of.Find(id);
    KESTREL_CHECK(vertex.has_value(), Describe("unknown node id", id).c_str());
    return *vertex;
  }

  // The waiting nodes of the first read (a loaded graph's) become the
  // ranking's heap, in linear time. Later ones, sorted first, enter it each
  // next to the last: linear, where inserting them one by one as they came
  // would search the tree for each.
  void Settle() const {
    if (unsettled.empty()) return;
    if (ranking.empty()) {
      ranking.Load(std::move(unsettled));
      unsettled = {};
      return;
    }
    std::sort(unsettled.begin(), unsettled.end(),
              [](const Ranking::Slotted& a, const Ranking::Slotted& b) { return BetterFirst()(a.key, b.key); });
    ranking.InsertSorted(unsettled);
    unsettled.clear();
  }

  template <class Visit>
  void VisitRanked(const Visit& visit) const {
    Settle();
    ranking.VisitInOrder([&](const RankKey& key) { return visit(key.id); });
  }

  // Calls visit(child, kind) along the vertex's out-edges, oldest first
  // (the loaded ones, then Boost's), until it returns true.
  template <class Visit>
  bool AnyChild(Vertex v, const Visit& visit) const {
    if (loaded_children.Any(v, visit)) return true;
    for (const auto& edge : boost::make_iterator_range(boost::out_edges(v, graph))) {
      if (visit(boost::target(edge, graph), graph[edge].kind)) return true;
    }
    return false;
  }
  // The same along its in-edges: visit(parent, kind).
  template <class Visit>
  bool AnyParent(Vertex v, const Visit& visit) const {
    if (loaded_parents.Any(v, visit)) return true;
    for (const auto& edge : boost::make_iterator_range(boost::in_edges(v, graph))) {
      if (visit(boost::source(edge, graph), graph[edge].kind)) return true;
    }
    return false;
  }

  bool HasEdge(Vertex parent, Vertex child, EdgeKind kind) const {
    // Scan the shorter of the two adjacency lists: a popular parent may have
    // thousands of children, while a child has few parents (and vice versa).
    const std::size_t children = loaded_children.Size(parent) + boost::out_degree(parent, graph);
    const std::size_t parents = loaded_parents.Size(child) + boost::in_degree(child, graph);
    if (children <= parents) {
      return AnyChild(parent, [&](Vertex other, EdgeKind other_kind) { return other == child && other_kind == kind; });
    }
    return AnyParent(child, [&](Vertex other, EdgeKind other_kind) { return other == parent && other_kind == kind; });
  }

  // What adding an edge (its child's id `child`) records besides the edge
  // and its place in edge_order.
  void Note(const StoredEdge& edge, NodeId child) {
    if (MadeChild(edge.kind) && first_parent[edge.child] == kNoParent) {
      first_parent[edge.child] = static_cast<std::uint32_t>(edge.parent);
    }
    changes.push_back(child);
  }

  // The edges of a graph without edges yet (`given`, resolved to
  // vertices), into the compressed rows; a repeated edge is dropped as
  // AddDerivation drops it. Repeats are looked for only when a row of
  // parents shows one (a node with one parent, the most, has none).
  void LoadEdges(std::vector<StoredEdge> edges, const std::vector<GraphEdge>& given) {
    const std::size_t vertex_count = nodes.size();
    loaded_parents.Fill(vertex_count, edges, false);
    std::vector<bool> repeated;  // by position in `given`; empty: none
    if (loaded_parents.HasRepeats(kScanLimit)) {
      repeated = Repeats(edges);
      std::size_t kept = 0;
      for (std::size_t i = 0; i < edges.size(); ++i) {
        if (!repeated[i]) edges[kept++] = edges[i];
      }
      edges.resize(kept);
      loaded_parents.Fill(vertex_count, edges, false);
    }
    loaded_children.Fill(vertex_count, edges, true);
    for (std::size_t i = 0, at = 0; i < given.size(); ++i) {
      if (!repeated.empty() && repeated[i]) continue;
      Note(edges[at++], given[i].child);
    }
    edge_order = std::move(edges);  // in insertion order already (with room to grow)
  }

  // Which of `edges` repeat an earlier one, found along each parent's row of
  // every edge's position.
  std::vector<bool> Repeats(const std::vector<StoredEdge>& edges) const {
    EdgeRows rows;
    std::vector<StoredEdge> positions;
    positions.reserve(edges.size());
    for (std::size_t i = 0; i < edges.size(); ++i) {
      positions.push_back({edges[i].parent, static_cast<Vertex>(i), edges[i].kind});
    }
    rows.Fill(nodes.size(), positions, true);
    std::vector<bool> repeated(edges.size());
    std::vector<Vertex> earlier;  // positions of a short row's first edges
    std::unordered_set<std::uint64_t> seen;  // a long row's (child, kind)
    for (Vertex v = 0; v < nodes.size(); ++v) {
      const std::size_t size = rows.Size(v);
      if (size < 2) continue;
      earlier.clear();
      seen.clear();
      rows.Any(v, [&](Vertex position, EdgeKind kind) {
        const Vertex child = edges[position].child;
        bool again = false;
        if (size <= kScanLimit) {
          again = std::any_of(earlier.begin(), earlier.end(),
                              [&](Vertex first) { return edges[first].child == child && edges[first].kind == kind; });
          if (!again) earlier.push_back(position);
        } else {
          again = !seen.insert((static_cast<std::uint64_t>(child) << 8) | static_cast<std::uint64_t>(kind)).second;
        }
        repeated[position] = again;
        return false;
      });
    }
    return repeated;
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
  KESTREL_CHECK(count < kNoParent, "a graph holds fewer than 2^32 nodes");
  impl_->vertex_of.Add(node.id, boost::add_vertex(impl_->graph), count);
  impl_->first_parent.push_back(kNoParent);
  const GraphNode& stored = impl_->nodes.Add(node);
  if (!stored.identity.empty()) impl_->by_identity.emplace(stored.identity, stored.id);
  if (IsRanked(node)) impl_->unsettled.push_back({{*node.speedup, node.id}, count});
}

void SearchGraph::Reserve(std::size_t nodes, std::size_t edges) {
  // And room to grow: a run adds nodes one at a time, and the first of them
  // would otherwise move every array a loaded graph just filled.
  nodes += nodes / 8 + 1024;
  edges += edges / 8 + 1024;
  // Huge pages for the large arrays (core/huge_pages.h).
  impl_->vertex_of.Reserve(nodes);
  auto& vertices = impl_->graph.m_vertices;
  vertices.reserve(nodes);
  AdviseHugePages(vertices.data(), vertices.capacity() * sizeof(vertices[0]));
  ReserveHuge(impl_->first_parent, nodes);
  ReserveHuge(impl_->unsettled, nodes);
  impl_->graph.m_edges.reserve(edges);
  ReserveHuge(impl_->edge_order, edges);
  ReserveHuge(impl_->changes, edges);
}

void SearchGraph::AddDerivation(NodeId parent, NodeId child, EdgeKind kind) {
  KESTREL_CHECK(parent != child, Describe("a node cannot derive from itself", child).c_str());
  const Vertex from = impl_->VertexOf(parent);
  const Vertex to = impl_->VertexOf(child);
  if (impl_->HasEdge(from, to, kind)) return;
  const bool added = boost::add_edge(from, to, EdgeData{kind}, impl_->graph).second;
  KESTREL_CHECK(added, "boost::add_edge refused an edge");
  impl_->edge_order.push_back({from, to, kind});
  impl_->Note({from, to, kind}, child);
}

void SearchGraph::AddDerivations(const std::vector<GraphEdge>& edges) {
  // Rows are filled once, for a graph without edges; later edges go to Boost.
  if (!impl_->edge_order.empty() || !impl_->loaded_children.empty()) {
    for (const GraphEdge& edge : edges) AddDerivation(edge.parent, edge.child, edge.kind);
    return;
  }
  KESTREL_CHECK(edges.size() < kNoParent, "a graph holds fewer than 2^32 edges");
  std::vector<StoredEdge> resolved;
  ReserveHuge(resolved, edges.size() + edges.size() / 8 + 1024);  // it becomes edge_order: room to grow
  for (const GraphEdge& edge : edges) {
    KESTREL_CHECK(edge.parent != edge.child, Describe("a node cannot derive from itself", edge.child).c_str());
    resolved.push_back({impl_->VertexOf(edge.parent), impl_->VertexOf(edge.child), edge.kind});
  }
  impl_->LoadEdges(std::move(resolved), edges);
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
  const Vertex vertex = impl_->VertexOf(id);
  GraphNode& node = impl_->nodes[vertex];
  impl_->Settle();
  if (IsRanked(node)) impl_->ranking.Erase({*node.speedup, node.id}, vertex);
  node.status = status;
  node.speedup = speedup;
  if (IsRanked(node)) impl_->ranking.Insert({*node.speedup, node.id});
  impl_->changes.push_back(id);
}

void SearchGraph::NoteExpansion(NodeId id) {
  ++impl_->nodes[impl_->VertexOf(id)].expansions;
  impl_->changes.push_back(id);
}

std::vector<NodeId> SearchGraph::Children(NodeId id) const {
  std::vector<NodeId> children;
  impl_->AnyChild(impl_->VertexOf(id), [&](Vertex child, EdgeKind) {
    children.push_back(impl_->nodes[child].id);
    return false;
  });
  DropRepeats(children);
  return children;
}

std::vector<NodeId> SearchGraph::Parents(NodeId id) const {
  std::vector<NodeId> parents;
  impl_->AnyParent(impl_->VertexOf(id), [&](Vertex parent, EdgeKind) {
    parents.push_back(impl_->nodes[parent].id);
    return false;
  });
  DropRepeats(parents);
  return parents;
}

std::optional<NodeId> SearchGraph::FirstParent(NodeId id) const {
  const std::uint32_t parent = impl_->first_parent[impl_->VertexOf(id)];
  if (parent == kNoParent) return std::nullopt;
  return impl_->nodes[parent].id;
}

std::optional<std::size_t> SearchGraph::FirstParentAt(std::size_t index) const {
  KESTREL_CHECK(index < impl_->nodes.size(), "a node index past the graph");
  const std::uint32_t parent = impl_->first_parent[index];
  if (parent == kNoParent) return std::nullopt;
  return parent;
}

std::vector<NodeId> SearchGraph::Lineage(NodeId id) const {
  const std::size_t vertex_count = impl_->nodes.size();
  std::vector<NodeId> path;
  // The oldest derivation's parent (Impl::Note); "duplicate" and
  // "same_code" edges point at an existing node, not at its origin.
  for (std::uint32_t vertex = static_cast<std::uint32_t>(impl_->VertexOf(id)); vertex != kNoParent;
       vertex = impl_->first_parent[vertex]) {
    path.push_back(impl_->nodes[vertex].id);
    // A path longer than the graph has nodes has gone round a cycle.
    KESTREL_CHECK(path.size() <= vertex_count, Describe("first parents form a cycle", id).c_str());
  }
  return {path.rbegin(), path.rend()};
}

std::vector<NodeId> SearchGraph::Best(std::size_t k) const {
  std::vector<NodeId> best;
  if (k == 0) return best;
  impl_->VisitRanked([&](NodeId id) {
    best.push_back(id);
    return best.size() < k;
  });
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
  impl_->VisitRanked(visit);
}

std::size_t SearchGraph::ChangeCount() const { return impl_->changes.size(); }
NodeId SearchGraph::ChangedAt(std::size_t index) const {
  KESTREL_CHECK(index < impl_->changes.size(), "a change index past the journal");
  return impl_->changes[index];
}

std::size_t SearchGraph::NodeCount() const { return impl_->nodes.size(); }
std::size_t SearchGraph::EdgeCount() const { return impl_->edge_order.size(); }

}  // namespace kestrel
