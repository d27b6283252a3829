#include "search/engine/stop_reason.h"

#include "core/enum_names.h"

namespace kestrel {
namespace {

constexpr std::string_view kErrorPrefix = "error: ";

constexpr EnumNames<StopKind, 8> kNames{{
    {StopKind::kTime, "time"},
    {StopKind::kEvaluations, "evaluations"},
    {StopKind::kUsd, "usd"},
    {StopKind::kPlateau, "plateau"},
    {StopKind::kExhausted, "exhausted"},
    {StopKind::kSignal, "signal"},
    {StopKind::kError, "error"},
    {StopKind::kRoofline, "roofline"},
}};

}  // namespace

StopReason StopReason::Error(std::string message) {
  StopReason reason(StopKind::kError);
  reason.error = std::move(message);
  return reason;
}

std::string_view ToString(StopKind kind) { return NameOf(kNames, kind); }

std::string ToString(const StopReason& reason) {
  if (reason.kind == StopKind::kError) return std::string(kErrorPrefix) + reason.error;
  return std::string(ToString(reason.kind));
}

std::optional<StopReason> ParseStopReason(std::string_view text) {
  if (text.starts_with(kErrorPrefix)) return StopReason::Error(std::string(text.substr(kErrorPrefix.size())));
  const auto kind = ValueOf(kNames, text);
  if (!kind || *kind == StopKind::kError) return std::nullopt;  // an error has its message
  return StopReason(*kind);
}

}  // namespace kestrel
