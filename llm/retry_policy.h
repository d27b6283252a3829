#pragma once
// Private to llm/: when to try a request again and how long to wait
// (LLM.md "Retry policy"). Pure functions, apart from the jitter source.

#include <optional>
#include <string>
#include <string_view>

#include "llm/llm_client.h"

namespace kestrel::llm {

// The seconds a `retry-after` header asks for: a non-negative number
// ("1", "0.5"). An HTTP date or garbage yields nullopt (fall back to backoff).
std::optional<double> ParseRetryAfter(std::string_view value);

// Full-jitter exponential backoff: unit * min(cap_s, base_s * 2^retry), where
// `retry` counts from 0 and `unit` is uniform in [0, 1).
double BackoffDelay(int retry, double base_s, double cap_s, double unit);

// A uniform draw in [0, 1) from a per-thread generator.
double JitterUnit();

struct RetryDecision {
  bool retry = false;
  double wait_s = 0.0;
  std::string why_not;  // when !retry and the kind was retryable: the limit that ended it
};

// After attempt number `tries_done` (1 = the first) failed with `kind`:
// retry only a retryable kind, while tries remain, waiting at least
// `retry_after_s` when the server sent it, else the jittered backoff; give up
// when the wait would end past the deadline (`remaining_s` seconds from now).
RetryDecision DecideRetry(LlmErrorKind kind, int tries_done, int max_tries,
                          std::optional<double> retry_after_s, double remaining_s,
                          double base_s, double cap_s, double unit);

}  // namespace kestrel::llm
