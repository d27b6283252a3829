#include "core/edge_kind.h"

#include <array>
#include <utility>

namespace kestrel {
namespace {

constexpr std::array<std::pair<EdgeKind, std::string_view>, 3> kEdgeKindNames{{
    {EdgeKind::kDerive, "derive"},
    {EdgeKind::kFix, "fix"},
    {EdgeKind::kDuplicate, "duplicate"},
}};

}  // namespace

std::string_view ToString(EdgeKind kind) {
  for (const auto& [value, name] : kEdgeKindNames) {
    if (value == kind) return name;
  }
  return "unknown";
}

std::optional<EdgeKind> ParseEdgeKind(std::string_view text) {
  for (const auto& [value, name] : kEdgeKindNames) {
    if (name == text) return value;
  }
  return std::nullopt;
}

}  // namespace kestrel
