#include "store/human_records.h"

#include <algorithm>

#include "core/enum_names.h"

namespace kestrel {
namespace {

constexpr EnumNames<HumanActionKind, 12> kHumanActionNames{{
    {HumanActionKind::kNote, "note"},
    {HumanActionKind::kLabel, "label"},
    {HumanActionKind::kSteer, "steer"},
    {HumanActionKind::kUnsteer, "unsteer"},
    {HumanActionKind::kBan, "ban"},
    {HumanActionKind::kUnban, "unban"},
    {HumanActionKind::kPin, "pin"},
    {HumanActionKind::kUnpin, "unpin"},
    {HumanActionKind::kAdd, "add"},
    {HumanActionKind::kReviewAccept, "review_accept"},
    {HumanActionKind::kReviewEdit, "review_edit"},
    {HumanActionKind::kReviewReject, "review_reject"},
}};

constexpr EnumNames<ReviewState, 5> kReviewStateNames{{
    {ReviewState::kOpen, "open"},
    {ReviewState::kAccepted, "accepted"},
    {ReviewState::kEdited, "edited"},
    {ReviewState::kRejected, "rejected"},
    {ReviewState::kWithdrawn, "withdrawn"},
}};

}  // namespace

std::string_view ToString(HumanActionKind kind) { return NameOf(kHumanActionNames, kind); }

std::optional<HumanActionKind> ParseHumanActionKind(std::string_view text) { return ValueOf(kHumanActionNames, text); }

std::string_view ToString(ReviewState state) { return NameOf(kReviewStateNames, state); }

std::optional<ReviewState> ParseReviewState(std::string_view text) { return ValueOf(kReviewStateNames, text); }

bool IsLabelWord(std::string_view word) {
  return std::find(std::begin(kLabelWords), std::end(kLabelWords), word) != std::end(kLabelWords);
}

}  // namespace kestrel
