#pragma once
// LlmClient: one chat request to a model, with retries, timeouts, a
// concurrency cap and accounting (LLM.md). Two wire formats: OpenAI-compatible
// (`POST {base_url}/chat/completions`) and Anthropic (`POST {base_url}/messages`).
//
// A failed call is a value: Complete() never throws and always returns an
// LlmResponse whose `kind` says what happened. The API key is sent in a header
// and never appears in any returned field or error message.
//
// Thread-safety: Complete() may be called from many threads at once; at most
// `max_concurrency` requests of one client are on the wire at a time, the
// others wait for a slot (that wait counts against the request's deadline).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace kestrel {

struct LlmMessage {
  std::string role;  // "user" | "assistant" (| "system": folded into the system prompt)
  std::string content;
};

struct LlmRequest {
  std::vector<LlmMessage> messages;
  std::string system;                  // empty: none
  double temperature = 0.7;
  int max_tokens = 16000;              // the reply's token limit
  std::optional<std::uint64_t> seed;   // OpenAI-compatible only; Anthropic has none
  // Polled while waiting (slot, backoff) and during a transfer (about once a
  // second when idle); returning true ends the call with kCancelled. Empty: never.
  // Called from the calling thread only; must be cheap and must not throw.
  std::function<bool()> cancelled;
};

// What a call ended with. Retryable kinds are retried within the endpoint's
// tries and deadline; when those run out the last failure's kind is returned.
enum class LlmErrorKind {
  kOk,
  kRateLimit,   // 429 rate limit (retryable)
  kOverloaded,  // 529 / overloaded_error (retryable)
  kServer,      // 5xx, 409 (retryable)
  kConnection,  // could not connect, connection reset, empty reply (retryable)
  kTimeout,     // the attempt's timeout, 408, or the request's deadline (retryable)
  kAuth,        // 401 / 403: the key is missing, wrong or lacks permission
  kQuota,       // insufficient_quota / billing / credit balance: stop spending
  kBadRequest,  // other 4xx (400, 404 unknown model ...): our request is wrong
  // The prompt does not fit the model's context (a 400 that says so, 413):
  // this request only; the next, shorter or not, may fit (not retried).
  kContextLength,
  kMalformed,   // a 2xx reply that is not the expected JSON (not retried)
  kCancelled,   // LlmRequest::cancelled said so (the engine is stopping)
};

std::string_view ToString(LlmErrorKind kind);
// Whether a failure of this kind is worth another try.
bool IsRetryable(LlmErrorKind kind);
// Whether this failure will recur on every request with this endpoint (auth,
// quota, bad request): the LLM mutator stops and says why; the search goes on.
// A prompt too long for the context is not one: it is this prompt's.
bool StopsMutator(LlmErrorKind kind);

struct LlmResponse {
  LlmErrorKind kind = LlmErrorKind::kOk;
  std::string text;            // the reply (Anthropic: all text blocks joined)
  std::string finish_reason;   // as sent: stop | length | end_turn | max_tokens | ...
  bool truncated = false;      // cut at the token limit: do not compile as complete
  std::int64_t input_tokens = 0;   // all prompt tokens, cached ones included
  std::int64_t output_tokens = 0;
  std::int64_t cached_tokens = 0;  // of input_tokens, served from the provider's cache
  double cost_usd = 0.0;           // from the endpoint's prices per million tokens
  double latency_s = 0.0;          // wall time of Complete(), waits and retries included
  int http_status = 0;             // of the last attempt; 0 when no HTTP reply came
  int retries = 0;                 // attempts after the first
  std::string error;               // empty when ok; never contains the API key

  bool ok() const { return kind == LlmErrorKind::kOk; }
};

struct LlmEndpoint {
  std::string provider = "openai";  // "openai" (any OpenAI-compatible server) | "anthropic"
  std::string model;
  std::string base_url;  // e.g. https://api.openai.com/v1, https://api.anthropic.com/v1
  std::string api_key;   // from ReadApiKey(); empty: no auth header (local servers)
  double timeout_s = 300;           // one attempt, connection to last byte (no low-speed cut)
  double connect_timeout_s = 10;    // TCP + TLS handshake of one attempt
  int max_concurrency = 4;          // requests of this client on the wire at once
  double price_input_per_mtok = 0.0;   // USD per million input tokens
  double price_output_per_mtok = 0.0;  // USD per million output tokens
  int max_tries = 5;                // attempts per request, the first included
  double backoff_base_s = 1.0;      // full-jitter backoff: U(0, min(cap, base * 2^retry))
  double backoff_cap_s = 60.0;
  double total_deadline_s = 900;    // per request: slot wait, attempts and waits together (RequestDeadline)
  // OpenAI's reasoning models (IsOpenAiReasoningModel) reject `max_tokens`
  // and want `max_completion_tokens`.
  bool use_max_completion_tokens = false;
  // Whether requests carry their temperature; false: the server's default
  // (the reasoning models refuse any other).
  bool send_temperature = true;
};

// Whether `model` is one of OpenAI's reasoning models (o1, o3, o4-mini,
// gpt-5 and their variants: o1*, o3*, o4*, gpt-5*), which take the reply's
// limit as `max_completion_tokens` and no temperature but their default.
bool IsOpenAiReasoningModel(std::string_view model);

// The deadline of one request whose attempts may each take `timeout_s`: room
// for a slot wait, the attempt and one retry (3 x timeout_s), and never
// under 15 minutes, so that backoff and retry-after waits fit.
double RequestDeadline(double timeout_s);

// The API key from the environment variable `env_var`. An empty name means
// "no key" (a local server) and yields "". Fails with kInvalidArgument naming
// the variable (never its value) when it is unset or empty.
Result<std::string> ReadApiKey(std::string_view env_var);

class LlmClient {
 public:
  // Validates the endpoint (provider, model, URL scheme, positive limits, a key
  // without line breaks) and initializes libcurl once per process.
  static Result<std::unique_ptr<LlmClient>> Make(LlmEndpoint endpoint);

  virtual ~LlmClient() = default;

  // Sends one request, retrying per LLM.md, and returns how it ended. Blocks
  // the calling thread for at most about `total_deadline_s`.
  virtual LlmResponse Complete(const LlmRequest& request) = 0;

  // For accounting (LlmCallRecord); the key is not exposed.
  virtual const std::string& provider() const = 0;
  virtual const std::string& model() const = 0;
};

}  // namespace kestrel
