#include "search/engine/stop_reason.h"

#include <array>
#include <utility>

namespace kestrel {
namespace {

constexpr std::string_view kErrorPrefix = "error: ";

constexpr std::array<std::pair<StopKind, std::string_view>, 7> kNames{{
    {StopKind::kTime, "time"},
    {StopKind::kEvaluations, "evaluations"},
    {StopKind::kUsd, "usd"},
    {StopKind::kPlateau, "plateau"},
    {StopKind::kExhausted, "exhausted"},
    {StopKind::kSignal, "signal"},
    {StopKind::kError, "error"},
}};

}  // namespace

StopReason StopReason::Error(std::string message) {
  StopReason reason(StopKind::kError);
  reason.error = std::move(message);
  return reason;
}

std::string_view ToString(StopKind kind) {
  for (const auto& [value, name] : kNames) {
    if (value == kind) return name;
  }
  return "unknown";
}

std::string ToString(const StopReason& reason) {
  if (reason.kind == StopKind::kError) return std::string(kErrorPrefix) + reason.error;
  return std::string(ToString(reason.kind));
}

std::optional<StopReason> ParseStopReason(std::string_view text) {
  if (text.starts_with(kErrorPrefix)) return StopReason::Error(std::string(text.substr(kErrorPrefix.size())));
  for (const auto& [value, name] : kNames) {
    if (name == text && value != StopKind::kError) return StopReason(value);
  }
  return std::nullopt;
}

}  // namespace kestrel
