#pragma once
// Private to llm/: the two wire formats, as pure functions from a
// request to an HTTP POST and from an HTTP reply to a parsed outcome. No I/O
// here, so each format is tested on literal bodies.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "llm/llm_client.h"

namespace kestrel::llm {

struct WireRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"; carries the key: never log
  std::string body;                  // JSON
};

// One HTTP reply, already received.
struct WireReply {
  int http_status = 0;
  std::string body;
};

// What one reply means. kind == kOk fills the text fields; otherwise `error`
// describes the failure (the provider's message, type and code).
struct ParsedReply {
  LlmErrorKind kind = LlmErrorKind::kOk;
  std::string text;
  std::string finish_reason;
  bool truncated = false;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int64_t cached_tokens = 0;
  std::string error;
};

// OpenAI-compatible: POST {base_url}/chat/completions, Authorization: Bearer.
WireRequest BuildOpenAiRequest(const LlmEndpoint& endpoint, const LlmRequest& request);
ParsedReply ParseOpenAiReply(const WireReply& reply);

// Anthropic: POST {base_url}/messages, x-api-key, anthropic-version.
WireRequest BuildAnthropicRequest(const LlmEndpoint& endpoint, const LlmRequest& request);
ParsedReply ParseAnthropicReply(const WireReply& reply);

// The kind of a non-2xx status before its body is looked at (shared by both
// formats; each refines 429 / 400 into quota from the error object, and a
// bad request into kContextLength with SaysContextLength).
LlmErrorKind KindOfStatus(int http_status);

// Whether the body of a refused request says that the prompt does not fit
// the model's context, in the words of OpenAI ("context_length_exceeded",
// "maximum context length"), vLLM, llama.cpp ("exceed_context_size"),
// Anthropic ("prompt is too long", "request_too_large") or a proxy ("too
// many tokens"). Case-insensitive; the whole body is read.
bool SaysContextLength(std::string_view body);

// `base_url` joined with `path` ("/messages"), with exactly one slash between.
std::string JoinUrl(std::string_view base_url, std::string_view path);

// The first `max_chars` of `text`, marked when cut (error messages carry bodies).
std::string Clip(std::string_view text, std::size_t max_chars = 300);

}  // namespace kestrel::llm
