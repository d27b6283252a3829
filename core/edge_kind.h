#pragma once
// The kinds of edge in a search graph, as the database and the output name
// them: derive (a mutation of the parent), fix (a repair of a failed
// parent), duplicate (a proposal that turned out to be an existing node),
// same_code (from a node to an already measured node whose build is the same
// code: the node was not timed, it carries that node's result), human (a
// person's candidate, `kestrel add --parent` or an edit in review mode).

#include <optional>
#include <string_view>

namespace kestrel {

enum class EdgeKind { kDerive, kFix, kDuplicate, kSameCode, kHuman };

// derive, fix and human edges made their child; duplicate and same_code edges
// only point at a node that existed already (lineage never follows them).
constexpr bool MadeChild(EdgeKind kind) {
  return kind == EdgeKind::kDerive || kind == EdgeKind::kFix || kind == EdgeKind::kHuman;
}

std::string_view ToString(EdgeKind kind);
std::optional<EdgeKind> ParseEdgeKind(std::string_view text);

}  // namespace kestrel
