#pragma once
// SearchGraph: the in-memory search graph of one task. Nodes are candidates,
// edges are derivations (parent -> child). Built over a Boost.Graph
// bidirectional adjacency list, but it speaks only the domain: node ids are
// the Store's ids and no Boost descriptor ever leaves this class. No I/O
// beyond writing Graphviz text to a stream.
//
// Thread-safety: none; the engine's record stage is its only writer and
// guards reads from other stages with its own mutex. (Not even between const
// readers: Best and VisitRanked rank the nodes added since the last of them.)

#include <cstdint>
#include <iosfwd>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/edge_kind.h"
#include "core/outcome.h"

namespace kestrel {

using NodeId = std::int64_t;

struct GraphNode {
  NodeId id = 0;
  std::string identity;
  std::string label;     // short, for display: knob values or the mutation
  std::string mutation;  // how it was made
  NodeStatus status = NodeStatus::kProposed;
  std::optional<double> speedup;  // measured speedup; nullopt unless measured
  int expansions = 0;             // times it was chosen as a parent
  std::int64_t run_id = 0;
};

struct GraphEdge {
  NodeId parent = 0;
  NodeId child = 0;
  EdgeKind kind = EdgeKind::kDerive;
};

class SearchGraph {
 public:
  SearchGraph();
  ~SearchGraph();
  SearchGraph(SearchGraph&&) noexcept;
  SearchGraph& operator=(SearchGraph&&) noexcept;

  // Adds a node; its id must be new (a broken invariant aborts).
  void AddNode(const GraphNode& node);
  // Room for `nodes` nodes and `edges` edges in all, and some more: a loader
  // that knows the counts saves the regrowth of a million-node graph's arrays.
  void Reserve(std::size_t nodes, std::size_t edges = 0);
  // Adds parent -> child; both must exist. A repeated edge is kept once.
  void AddDerivation(NodeId parent, NodeId child, EdgeKind kind);
  // The same for each edge in order, with the same result as one
  // AddDerivation after another. On a graph without edges yet (a loaded
  // graph) they are kept in compressed rows instead of Boost's per-node
  // vectors: a million edges without a million allocations.
  void AddDerivations(const std::vector<GraphEdge>& edges);
  bool Contains(NodeId id) const;
  std::optional<NodeId> FindByIdentity(const std::string& identity) const;
  // The node's data; it must exist.
  const GraphNode& Node(NodeId id) const;
  // Sets status and speedup (nullopt unless measured).
  void SetResult(NodeId id, NodeStatus status, std::optional<double> speedup);
  void NoteExpansion(NodeId id);

  std::vector<NodeId> Children(NodeId id) const;
  std::vector<NodeId> Parents(NodeId id) const;
  // The path from a root (a node without parents) to `id`, root first,
  // following each node's first (oldest) parent; "duplicate" and
  // "same_code" edges are not followed (they point at an existing node, not
  // at where a node came from).
  std::vector<NodeId> Lineage(NodeId id) const;
  // The next step of Lineage: the node's oldest parent along a derive or fix
  // edge; nullopt for a root.
  std::optional<NodeId> FirstParent(NodeId id) const;
  // The same by insertion index: the first parent's index (IndexOf).
  std::optional<std::size_t> FirstParentAt(std::size_t index) const;
  // The k measured nodes with the highest speedup, best first (ties: lower id).
  std::vector<NodeId> Best(std::size_t k) const;
  // Every node id, in insertion order.
  std::vector<NodeId> Nodes() const;
  // The node added `index`-th (insertion order; index < NodeCount()).
  const GraphNode& NodeAt(std::size_t index) const;
  // The inverse: the insertion index of a node of the graph.
  std::size_t IndexOf(NodeId id) const;
  // The measured nodes best first (ties: lower id), as Best orders them,
  // until `visit` returns false: a reader that skips some needs no count.
  void VisitRanked(const std::function<bool(NodeId)>& visit) const;
  // A journal of changes to nodes already added, for readers that keep
  // derived state incrementally (search/strategies/ucb_index.h): each
  // SetResult, NoteExpansion and AddDerivation (the child) appends the
  // node's id. ChangedAt(i) for i < ChangeCount().
  std::size_t ChangeCount() const;
  NodeId ChangedAt(std::size_t index) const;
  std::vector<GraphEdge> Edges() const;
  std::size_t NodeCount() const;
  std::size_t EdgeCount() const;

  // Graphviz DOT: one box per node (label, status, speedup), measured nodes
  // shaded by speedup, failures in red, the best node bold.
  void WriteDot(std::ostream& out, const std::string& title) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kestrel
