// Retry decisions and backoff (retry_policy.h).

#include "llm/retry_policy.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <random>

#include "core/duration.h"

namespace kestrel::llm {

std::optional<double> ParseRetryAfter(std::string_view value) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t' || value.back() == '\r' ||
                            value.back() == '\n')) {
    value.remove_suffix(1);
  }
  if (value.empty()) return std::nullopt;
  double seconds = 0.0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (error != std::errc() || end != value.data() + value.size()) return std::nullopt;
  if (!std::isfinite(seconds) || seconds < 0.0) return std::nullopt;
  return seconds;
}

double BackoffDelay(int retry, double base_s, double cap_s, double unit) {
  const double exponent = std::min(retry, 62);
  const double ceiling = std::min(cap_s, base_s * std::exp2(exponent));
  return std::clamp(unit, 0.0, 1.0) * std::max(ceiling, 0.0);
}

double JitterUnit() {
  thread_local std::mt19937_64 generator{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(generator);
}

RetryDecision DecideRetry(LlmErrorKind kind, int tries_done, int max_tries,
                          std::optional<double> retry_after_s, double remaining_s,
                          double base_s, double cap_s, double unit) {
  RetryDecision decision;
  if (!IsRetryable(kind)) return decision;
  if (tries_done >= max_tries) {
    decision.why_not = "gave up after " + std::to_string(tries_done) + " tries";
    return decision;
  }
  const double wait_s = retry_after_s ? *retry_after_s
                                      : BackoffDelay(tries_done - 1, base_s, cap_s, unit);
  if (wait_s >= remaining_s) {
    decision.why_not = "the request's deadline leaves no time to wait " +
                       FormatDuration(Seconds(wait_s)) + " and try again";
    return decision;
  }
  decision.retry = true;
  decision.wait_s = wait_s;
  return decision;
}

}  // namespace kestrel::llm
