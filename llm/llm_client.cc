// LlmClient over libcurl: the retry loop, the concurrency cap, accounting and
// key scrubbing. The wire formats live in wire_*.cc, the HTTP call in
// http_transport.cc, the retry rules in retry_policy.cc.

#include "llm/llm_client.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <semaphore>
#include <thread>

#include "core/duration.h"
#include "llm/http_transport.h"
#include "llm/retry_policy.h"
#include "llm/wire_format.h"

namespace kestrel {

std::string_view ToString(LlmErrorKind kind) {
  switch (kind) {
    case LlmErrorKind::kOk: return "ok";
    case LlmErrorKind::kRateLimit: return "rate_limit";
    case LlmErrorKind::kOverloaded: return "overloaded";
    case LlmErrorKind::kServer: return "server";
    case LlmErrorKind::kConnection: return "connection";
    case LlmErrorKind::kTimeout: return "timeout";
    case LlmErrorKind::kAuth: return "auth";
    case LlmErrorKind::kQuota: return "quota";
    case LlmErrorKind::kBadRequest: return "bad_request";
    case LlmErrorKind::kContextLength: return "context_length";
    case LlmErrorKind::kMalformed: return "malformed";
    case LlmErrorKind::kCancelled: return "cancelled";
  }
  return "unknown";
}

bool IsRetryable(LlmErrorKind kind) {
  switch (kind) {
    case LlmErrorKind::kRateLimit:
    case LlmErrorKind::kOverloaded:
    case LlmErrorKind::kServer:
    case LlmErrorKind::kConnection:
    case LlmErrorKind::kTimeout:
      return true;
    default:
      return false;
  }
}

bool StopsMutator(LlmErrorKind kind) {
  return kind == LlmErrorKind::kAuth || kind == LlmErrorKind::kQuota ||
         kind == LlmErrorKind::kBadRequest;
}

bool IsOpenAiReasoningModel(std::string_view model) {
  // A family name, alone or followed by a variant ("o4-mini", "gpt-5.1").
  const auto family = [&](std::string_view name, std::string_view separators) {
    return model.starts_with(name) &&
           (model.size() == name.size() || separators.find(model[name.size()]) != std::string_view::npos);
  };
  return family("o1", "-") || family("o3", "-") || family("o4", "-") || family("gpt-5", "-.");
}

double RequestDeadline(double timeout_s) { return std::max(900.0, 3.0 * timeout_s); }

Result<std::string> ReadApiKey(std::string_view env_var) {
  if (env_var.empty()) return std::string();
  const std::string name(env_var);
  const char* value = std::getenv(name.c_str());
  if (value == nullptr || *value == '\0') {
    return Fail(Error::InvalidArgument("the API key's environment variable " + name +
                                       " is not set (export it, or set api_key_env)"));
  }
  return std::string(value);
}

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

constexpr auto kPollInterval = std::chrono::milliseconds(50);

bool IsCancelled(const LlmRequest& request) { return request.cancelled && request.cancelled(); }

// Sleeps until `until`, waking every kPollInterval to poll the request's
// cancellation; false when it was cancelled.
bool SleepUntil(Clock::time_point until, const LlmRequest& request) {
  for (;;) {
    if (IsCancelled(request)) return false;
    const Clock::time_point now = Clock::now();
    if (now >= until) return true;
    std::this_thread::sleep_for(std::min<Clock::duration>(until - now, kPollInterval));
  }
}

void MarkCancelled(LlmResponse& response) {
  response.kind = LlmErrorKind::kCancelled;
  response.error = (response.error.empty() ? "" : response.error + "; ") + "cancelled";
}

// Replaces every occurrence of `secret` in `text` (no-op for an empty secret).
void Scrub(std::string& text, const std::string& secret) {
  if (secret.empty()) return;
  for (std::size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at)) {
    text.replace(at, secret.size(), "[redacted]");
  }
}

class CurlLlmClient final : public LlmClient {
 public:
  explicit CurlLlmClient(LlmEndpoint endpoint)
      : endpoint_(std::move(endpoint)), slots_(endpoint_.max_concurrency) {}

  LlmResponse Complete(const LlmRequest& request) override {
    const Clock::time_point start = Clock::now();
    LlmResponse response;
    try {
      Run(request, start, response);
    } catch (const std::exception& e) {  // a bug or bad_alloc: still a value
      response.kind = LlmErrorKind::kMalformed;
      response.error = std::string("internal error: ") + e.what();
    }
    response.latency_s = SecondsSince(start);
    Scrub(response.error, endpoint_.api_key);
    Scrub(response.text, endpoint_.api_key);
    Scrub(response.finish_reason, endpoint_.api_key);
    return response;
  }

  const std::string& provider() const override { return endpoint_.provider; }
  const std::string& model() const override { return endpoint_.model; }

 private:
  void Run(const LlmRequest& request, Clock::time_point start, LlmResponse& response) {
    const bool anthropic = endpoint_.provider == "anthropic";
    const llm::WireRequest wire = anthropic ? llm::BuildAnthropicRequest(endpoint_, request)
                                            : llm::BuildOpenAiRequest(endpoint_, request);
    const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(endpoint_.total_deadline_s));
    auto remaining_s = [&] { return std::chrono::duration<double>(deadline - Clock::now()).count(); };

    for (int tries = 1;; ++tries) {
      const SlotWait wait = AcquireSlot(deadline, request);
      if (wait == SlotWait::kCancelled) return MarkCancelled(response);
      if (wait == SlotWait::kDeadline) {
        response.kind = LlmErrorKind::kTimeout;
        response.error = (response.error.empty() ? "" : response.error + "; ") +
                         "the request's deadline passed while waiting for a free slot (" +
                         std::to_string(endpoint_.max_concurrency) + " in flight)";
        return;
      }
      const double attempt_timeout_s = std::min(endpoint_.timeout_s, remaining_s());
      llm::HttpResult http;
      {
        const SlotRelease release{slots_};
        if (attempt_timeout_s > 0.001) {
          http = llm::HttpPost(wire, attempt_timeout_s, endpoint_.connect_timeout_s,
                               request.cancelled);
        } else {
          http.transport_kind = LlmErrorKind::kTimeout;
          http.transport_error = "no time left before the request's deadline";
        }
      }

      response.http_status = http.http_status;
      response.retries = tries - 1;
      llm::ParsedReply parsed;
      if (http.transport_kind != LlmErrorKind::kOk) {
        parsed.kind = http.transport_kind;
        parsed.error = http.transport_error;
        if (parsed.kind == LlmErrorKind::kTimeout) {
          parsed.error += " (after " + FormatDuration(Seconds(attempt_timeout_s)) + ")";
        }
      } else {
        parsed = anthropic ? llm::ParseAnthropicReply({http.http_status, http.body})
                           : llm::ParseOpenAiReply({http.http_status, http.body});
      }
      Fill(parsed, response);
      if (parsed.kind == LlmErrorKind::kOk) return;
      if (parsed.kind == LlmErrorKind::kCancelled) return MarkCancelled(response);

      const llm::RetryDecision decision = llm::DecideRetry(
          parsed.kind, tries, endpoint_.max_tries, http.retry_after_s, remaining_s(),
          endpoint_.backoff_base_s, endpoint_.backoff_cap_s, llm::JitterUnit());
      if (!decision.retry) {
        if (!decision.why_not.empty()) response.error += "; " + decision.why_not;
        return;
      }
      const auto wake = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(decision.wait_s));
      if (!SleepUntil(wake, request)) return MarkCancelled(response);
    }
  }

  enum class SlotWait { kAcquired, kDeadline, kCancelled };
  struct SlotRelease {
    std::counting_semaphore<>& slots;
    ~SlotRelease() { slots.release(); }
  };

  // Takes one of the max_concurrency slots, polling for cancellation.
  SlotWait AcquireSlot(Clock::time_point deadline, const LlmRequest& request) {
    for (;;) {
      if (IsCancelled(request)) return SlotWait::kCancelled;
      const Clock::time_point now = Clock::now();
      if (now >= deadline) return SlotWait::kDeadline;
      if (slots_.try_acquire_until(std::min(deadline, now + kPollInterval))) {
        return SlotWait::kAcquired;
      }
    }
  }

  void Fill(const llm::ParsedReply& parsed, LlmResponse& response) const {
    response.kind = parsed.kind;
    response.text = parsed.text;
    response.finish_reason = parsed.finish_reason;
    response.truncated = parsed.truncated;
    response.input_tokens = parsed.input_tokens;
    response.output_tokens = parsed.output_tokens;
    response.cached_tokens = parsed.cached_tokens;
    response.cost_usd = (static_cast<double>(parsed.input_tokens) * endpoint_.price_input_per_mtok +
                         static_cast<double>(parsed.output_tokens) * endpoint_.price_output_per_mtok) /
                        1e6;
    response.error = parsed.error;
    if (!parsed.error.empty()) {
      response.error = endpoint_.provider + " " + endpoint_.model + ": " + parsed.error;
    }
  }

  const LlmEndpoint endpoint_;
  std::counting_semaphore<> slots_;
};

bool HasLineBreak(std::string_view text) { return text.find_first_of("\r\n") != std::string_view::npos; }

}  // namespace

Result<std::unique_ptr<LlmClient>> LlmClient::Make(LlmEndpoint endpoint) {
  auto invalid = [&](const std::string& what) {
    return Fail(Error::InvalidArgument("llm endpoint " + endpoint.provider + "/" + endpoint.model +
                                       ": " + what));
  };
  if (endpoint.provider != "openai" && endpoint.provider != "anthropic") {
    return invalid("provider must be \"openai\" or \"anthropic\"");
  }
  if (endpoint.model.empty()) return invalid("model is empty");
  if (endpoint.base_url.rfind("http://", 0) != 0 && endpoint.base_url.rfind("https://", 0) != 0) {
    return invalid("base_url must start with http:// or https:// (got \"" + endpoint.base_url + "\")");
  }
  if (HasLineBreak(endpoint.api_key)) return invalid("the API key contains a line break");
  if (HasLineBreak(endpoint.model) || HasLineBreak(endpoint.base_url)) {
    return invalid("model or base_url contains a line break");
  }
  if (!(endpoint.timeout_s > 0) || !(endpoint.connect_timeout_s > 0) ||
      !(endpoint.total_deadline_s > 0)) {
    return invalid("timeout_s, connect_timeout_s and total_deadline_s must be > 0");
  }
  if (endpoint.max_concurrency < 1) return invalid("max_concurrency must be >= 1");
  if (endpoint.max_tries < 1) return invalid("max_tries must be >= 1");
  if (endpoint.backoff_base_s < 0 || endpoint.backoff_cap_s < 0) {
    return invalid("backoff_base_s and backoff_cap_s must be >= 0");
  }
  if (endpoint.price_input_per_mtok < 0 || endpoint.price_output_per_mtok < 0) {
    return invalid("prices must be >= 0");
  }
  llm::InitCurlOnce();
  return std::unique_ptr<LlmClient>(new CurlLlmClient(std::move(endpoint)));
}

}  // namespace kestrel
