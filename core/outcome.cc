#include "core/outcome.h"

#include <array>

#include "core/enum_names.h"

namespace kestrel {
namespace {

constexpr EnumNames<NodeStatus, 8> kStatusNames{{
    {NodeStatus::kProposed, "proposed"},
    {NodeStatus::kBuilt, "built"},
    {NodeStatus::kMeasured, "measured"},
    {NodeStatus::kBuildFailed, "build_failed"},
    {NodeStatus::kWrong, "wrong"},
    {NodeStatus::kCrashed, "crashed"},
    {NodeStatus::kTimedOut, "timed_out"},
    {NodeStatus::kRejected, "rejected"},
}};

}  // namespace

NodeStatus StatusOf(Outcome outcome) {
  switch (outcome) {
    case Outcome::kMeasured: return NodeStatus::kMeasured;
    case Outcome::kBuildFailed: return NodeStatus::kBuildFailed;
    case Outcome::kWrong: return NodeStatus::kWrong;
    case Outcome::kCrashed: return NodeStatus::kCrashed;
    case Outcome::kTimedOut: return NodeStatus::kTimedOut;
    case Outcome::kRejected: return NodeStatus::kRejected;
  }
  return NodeStatus::kRejected;
}

std::string_view ToString(NodeStatus status) { return NameOf(kStatusNames, status); }

std::string_view ToString(Outcome outcome) { return ToString(StatusOf(outcome)); }

std::optional<NodeStatus> ParseNodeStatus(std::string_view text) { return ValueOf(kStatusNames, text); }

std::optional<Outcome> ParseOutcome(std::string_view text) {
  constexpr std::array<Outcome, 6> kAll{Outcome::kMeasured, Outcome::kBuildFailed, Outcome::kWrong,
                                        Outcome::kCrashed,  Outcome::kTimedOut,    Outcome::kRejected};
  for (Outcome outcome : kAll) {
    if (ToString(outcome) == text) return outcome;
  }
  return std::nullopt;
}

bool IsFinal(NodeStatus status) {
  return status != NodeStatus::kProposed && status != NodeStatus::kBuilt;
}

}  // namespace kestrel
