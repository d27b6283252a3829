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

}  // namespace kestrel
