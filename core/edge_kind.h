#pragma once
// The kinds of edge in a search graph, as the database and the output name
// them: derive (a mutation of the parent), fix (a repair of a failed
// parent), duplicate (a proposal that turned out to be an existing node).

#include <optional>
#include <string_view>

namespace kestrel {

enum class EdgeKind { kDerive, kFix, kDuplicate };

std::string_view ToString(EdgeKind kind);
std::optional<EdgeKind> ParseEdgeKind(std::string_view text);

}  // namespace kestrel
