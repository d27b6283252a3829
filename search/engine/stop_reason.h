#pragma once
// Why a run stopped. The words are stored with the run (runs.stop_reason),
// printed at its end and shown by `kestrel runs`; an error carries its
// message ("error: MESSAGE").

#include <optional>
#include <string>
#include <string_view>

namespace kestrel {

// kRoofline: a confirmed best reached budget.roofline of the roofline.
enum class StopKind { kTime, kEvaluations, kUsd, kPlateau, kExhausted, kSignal, kError, kRoofline };

struct StopReason {
  StopReason(StopKind kind = StopKind::kExhausted) : kind(kind) {}  // NOLINT: a kind is a reason
  static StopReason Error(std::string message);

  StopKind kind;
  std::string error;  // kError only: what went wrong

  bool operator==(const StopReason&) const = default;
};

std::string_view ToString(StopKind kind);
// "time", "evaluations", ..., "error: MESSAGE".
std::string ToString(const StopReason& reason);
// The inverse of ToString; nullopt for other text.
std::optional<StopReason> ParseStopReason(std::string_view text);

}  // namespace kestrel
