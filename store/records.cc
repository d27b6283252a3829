#include "store/records.h"

#include <chrono>

#include "core/enum_names.h"

namespace kestrel {
namespace {

constexpr EnumNames<ConfirmationVerdict, 4> kVerdictNames{{
    {ConfirmationVerdict::kConfirmed, "confirmed"},
    {ConfirmationVerdict::kWithinNoise, "within_noise"},
    {ConfirmationVerdict::kUnstable, "unstable"},
    {ConfirmationVerdict::kFinal, "final"},
}};

}  // namespace

std::string_view ToString(ConfirmationVerdict verdict) { return NameOf(kVerdictNames, verdict); }

std::optional<ConfirmationVerdict> ParseConfirmationVerdict(std::string_view text) {
  return ValueOf(kVerdictNames, text);
}

std::int64_t NowMillis() {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  using std::chrono::system_clock;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

namespace {

constexpr EnumNames<RunStatus, 4> kRunStatusNames{{
    {RunStatus::kRunning, "running"},
    {RunStatus::kFinished, "finished"},
    {RunStatus::kInterrupted, "interrupted"},
    {RunStatus::kFailed, "failed"},
}};

}  // namespace

std::string_view ToString(RunStatus status) { return NameOf(kRunStatusNames, status); }

std::optional<RunStatus> ParseRunStatus(std::string_view text) { return ValueOf(kRunStatusNames, text); }

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
