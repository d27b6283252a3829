#include "core/edge_kind.h"

#include "core/enum_names.h"

namespace kestrel {
namespace {

constexpr EnumNames<EdgeKind, 5> kEdgeKindNames{{
    {EdgeKind::kDerive, "derive"},
    {EdgeKind::kFix, "fix"},
    {EdgeKind::kDuplicate, "duplicate"},
    {EdgeKind::kSameCode, "same_code"},
    {EdgeKind::kHuman, "human"},
}};

}  // namespace

std::string_view ToString(EdgeKind kind) { return NameOf(kEdgeKindNames, kind); }

std::optional<EdgeKind> ParseEdgeKind(std::string_view text) { return ValueOf(kEdgeKindNames, text); }

}  // namespace kestrel
