#include "store/records.h"

#include <array>
#include <chrono>
#include <utility>

namespace kestrel {
namespace {

constexpr std::array<std::pair<ConfirmationVerdict, std::string_view>, 4> kVerdictNames{{
    {ConfirmationVerdict::kConfirmed, "confirmed"},
    {ConfirmationVerdict::kWithinNoise, "within_noise"},
    {ConfirmationVerdict::kUnstable, "unstable"},
    {ConfirmationVerdict::kFinal, "final"},
}};

}  // namespace

std::string_view ToString(ConfirmationVerdict verdict) {
  for (const auto& [value, name] : kVerdictNames) {
    if (value == verdict) return name;
  }
  return "unknown";
}

std::optional<ConfirmationVerdict> ParseConfirmationVerdict(std::string_view text) {
  for (const auto& [value, name] : kVerdictNames) {
    if (name == text) return value;
  }
  return std::nullopt;
}

std::int64_t NowMillis() {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  using std::chrono::system_clock;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

namespace {

constexpr std::array<std::pair<RunStatus, std::string_view>, 4> kRunStatusNames{{
    {RunStatus::kRunning, "running"},
    {RunStatus::kFinished, "finished"},
    {RunStatus::kInterrupted, "interrupted"},
    {RunStatus::kFailed, "failed"},
}};

}  // namespace

std::string_view ToString(RunStatus status) {
  for (const auto& [value, name] : kRunStatusNames) {
    if (value == status) return name;
  }
  return "unknown";
}

std::optional<RunStatus> ParseRunStatus(std::string_view text) {
  for (const auto& [value, name] : kRunStatusNames) {
    if (name == text) return value;
  }
  return std::nullopt;
}

NodeRecord NewNodeRecord(const Candidate& candidate, std::int64_t graph_id, std::int64_t run_id,
                         std::string mutation) {
  NodeRecord record;
  record.graph_id = graph_id;
  record.run_id = run_id;
  record.identity = candidate.Identity();
  record.source = candidate.source;
  record.knobs = candidate.knobs;
  record.toolchain = candidate.toolchain;
  record.flags = candidate.flags;
  record.mutation = std::move(mutation);
  return record;
}

}  // namespace kestrel
