#pragma once
// The words for what happened to a candidate (EVALUATION.md, "Outcomes") and
// for where a node is in its life. The same words appear in human output,
// in --json output and in the database.

#include <optional>
#include <string_view>

namespace kestrel {

enum class Outcome { kMeasured, kBuildFailed, kWrong, kCrashed, kTimedOut, kRejected };

// proposed -> built -> one of the outcomes (or build_failed straight away).
enum class NodeStatus { kProposed, kBuilt, kMeasured, kBuildFailed, kWrong, kCrashed, kTimedOut, kRejected };

std::string_view ToString(Outcome outcome);
std::string_view ToString(NodeStatus status);
std::optional<Outcome> ParseOutcome(std::string_view text);
std::optional<NodeStatus> ParseNodeStatus(std::string_view text);
NodeStatus StatusOf(Outcome outcome);
// True for the statuses that end a node's evaluation.
bool IsFinal(NodeStatus status);

}  // namespace kestrel
