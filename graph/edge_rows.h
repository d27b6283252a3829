#pragma once
// EdgeRows: one side of a loaded graph's edges in compressed rows, for
// SearchGraph (search_graph.cc) only: where Boost keeps a vector per node
// (an allocation each, a cache miss per random parent while a million edges
// load), two arrays hold every row.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/edge_kind.h"
#include "core/huge_pages.h"

namespace kestrel::graph_rows {

// An edge as added, between vertex indexes (Boost's edge descriptors do
// not outlive its edge list's growth).
struct StoredEdge {
  std::size_t parent;
  std::size_t child;
  EdgeKind kind;
};

// One side of the loaded edges (each node's children, or its parents), in
// compressed rows: the row of vertex v is [start[v], start[v + 1]) of `other`
// (the vertex at the other end) and `kind`, in the order the edges were
// added. Vertices added after the load have no row.
class EdgeRows {
 public:
  // Rows of `vertex_count` vertices from `edges` (in order), each edge in the
  // row of its parent (`by_parent`) or of its child.
  void Fill(std::size_t vertex_count, const std::vector<StoredEdge>& edges, bool by_parent) {
    start_.clear();
    ReserveHuge(start_, vertex_count + 1);
    start_.assign(vertex_count + 1, 0);
    for (const StoredEdge& edge : edges) ++start_[(by_parent ? edge.parent : edge.child) + 1];
    for (std::size_t v = 0; v < vertex_count; ++v) start_[v + 1] += start_[v];
    other_.clear();
    ReserveHuge(other_, edges.size());
    other_.resize(edges.size());
    kind_.clear();
    ReserveHuge(kind_, edges.size());
    kind_.resize(edges.size());
    std::vector<std::uint32_t> next;
    ReserveHuge(next, vertex_count);
    next.assign(start_.begin(), start_.end() - 1);
    for (const StoredEdge& edge : edges) {
      const std::uint32_t at = next[by_parent ? edge.parent : edge.child]++;
      other_[at] = static_cast<std::uint32_t>(by_parent ? edge.child : edge.parent);
      kind_[at] = edge.kind;
    }
  }
  std::size_t Size(std::size_t v) const { return v + 1 < start_.size() ? start_[v + 1] - start_[v] : 0; }
  // Calls visit(other end, kind) along the row until it returns true.
  template <class Visit>
  bool Any(std::size_t v, const Visit& visit) const {
    if (v + 1 >= start_.size()) return false;
    for (std::uint32_t i = start_[v]; i < start_[v + 1]; ++i) {
      if (visit(static_cast<std::size_t>(other_[i]), kind_[i])) return true;
    }
    return false;
  }
  bool empty() const { return start_.empty(); }
  // Whether a row holds an edge twice (the same other end and kind): rows
  // up to `scan_limit` long compared pairwise, longer ones sorted.
  bool HasRepeats(std::size_t scan_limit) const {
    std::vector<std::uint64_t> keys;
    for (std::size_t v = 0; v + 1 < start_.size(); ++v) {
      const std::uint32_t first = start_[v], last = start_[v + 1];
      if (last - first < 2) continue;
      if (last - first <= scan_limit) {
        for (std::uint32_t i = first + 1; i < last; ++i) {
          for (std::uint32_t j = first; j < i; ++j) {
            if (other_[i] == other_[j] && kind_[i] == kind_[j]) return true;
          }
        }
        continue;
      }
      keys.clear();
      for (std::uint32_t i = first; i < last; ++i) {
        keys.push_back((static_cast<std::uint64_t>(other_[i]) << 8) | static_cast<std::uint64_t>(kind_[i]));
      }
      std::sort(keys.begin(), keys.end());
      if (std::adjacent_find(keys.begin(), keys.end()) != keys.end()) return true;
    }
    return false;
  }

 private:
  std::vector<std::uint32_t> start_;
  std::vector<std::uint32_t> other_;
  std::vector<EdgeKind> kind_;
};

}  // namespace kestrel::graph_rows
