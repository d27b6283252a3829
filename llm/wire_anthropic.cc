// The Anthropic Messages API wire format (LLM.md).

#include <string>

#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "llm/wire_format.h"

namespace kestrel::llm {
namespace {

using nlohmann::json;

constexpr const char* kAnthropicVersion = "2023-06-01";

std::string StringOr(const json& object, const char* key) {
  if (!object.is_object()) return "";
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

std::int64_t IntOr(const json& object, const char* key) {
  if (!object.is_object()) return 0;
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<std::int64_t>() : 0;
}

// {"type": "error", "error": {"type", "message"}} -> kind and message.
ParsedReply ParseError(int http_status, const json& body, const std::string& raw) {
  ParsedReply parsed;
  parsed.kind = KindOfStatus(http_status);
  std::string type, message;
  if (body.is_object() && body.contains("error") && body["error"].is_object()) {
    type = StringOr(body["error"], "type");
    message = StringOr(body["error"], "message");
  } else {
    message = Clip(raw);
  }
  if (type == "billing_error" || message.find("credit balance") != std::string::npos) {
    parsed.kind = LlmErrorKind::kQuota;
  } else if (type == "overloaded_error") {
    parsed.kind = LlmErrorKind::kOverloaded;
  } else if (type == "authentication_error" || type == "permission_error") {
    parsed.kind = LlmErrorKind::kAuth;
  } else if (parsed.kind == LlmErrorKind::kBadRequest && SaysContextLength(raw)) {
    parsed.kind = LlmErrorKind::kContextLength;
  }
  parsed.error = "HTTP " + std::to_string(http_status) + ": " + message;
  if (!type.empty()) parsed.error += " (type " + type + ")";
  return parsed;
}

}  // namespace

WireRequest BuildAnthropicRequest(const LlmEndpoint& endpoint, const LlmRequest& request) {
  std::string system = request.system;
  json messages = json::array();
  for (const LlmMessage& message : request.messages) {
    if (message.role == "system") {  // Anthropic takes the system prompt at the top
      if (!system.empty()) system += "\n\n";
      system += message.content;
      continue;
    }
    messages.push_back({{"role", message.role}, {"content", message.content}});
  }
  json body = {{"model", endpoint.model}, {"max_tokens", request.max_tokens}, {"messages", std::move(messages)}};
  if (endpoint.send_temperature) body["temperature"] = request.temperature;
  if (!system.empty()) body["system"] = system;

  WireRequest wire;
  wire.url = JoinUrl(endpoint.base_url, "/messages");
  wire.headers = {"Content-Type: application/json", "Accept: application/json",
                  std::string("anthropic-version: ") + kAnthropicVersion};
  if (!endpoint.api_key.empty()) wire.headers.push_back("x-api-key: " + endpoint.api_key);
  wire.body = JsonText(body);
  return wire;
}

ParsedReply ParseAnthropicReply(const WireReply& reply) {
  const json body = json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
  const bool success = reply.http_status >= 200 && reply.http_status < 300;
  if (!success) return ParseError(reply.http_status, body, reply.body);

  ParsedReply parsed;
  if (body.is_discarded() || !body.is_object()) {
    parsed.kind = LlmErrorKind::kMalformed;
    parsed.error = "reply is not a JSON object: " + Clip(reply.body);
    return parsed;
  }
  if (StringOr(body, "type") == "error") {
    parsed = ParseError(reply.http_status, body, reply.body);
    parsed.kind = LlmErrorKind::kMalformed;
    return parsed;
  }
  const auto content = body.find("content");
  if (content == body.end() || !content->is_array()) {
    parsed.kind = LlmErrorKind::kMalformed;
    parsed.error = "reply has no content array: " + Clip(reply.body);
    return parsed;
  }
  for (const json& block : *content) {
    if (StringOr(block, "type") == "text") parsed.text += StringOr(block, "text");
  }
  parsed.finish_reason = StringOr(body, "stop_reason");
  parsed.truncated = parsed.finish_reason == "max_tokens";
  if (const auto usage = body.find("usage"); usage != body.end() && usage->is_object()) {
    // input_tokens excludes cache reads and writes; ours counts the whole prompt.
    const std::int64_t cache_read = IntOr(*usage, "cache_read_input_tokens");
    parsed.input_tokens = IntOr(*usage, "input_tokens") + cache_read +
                          IntOr(*usage, "cache_creation_input_tokens");
    parsed.output_tokens = IntOr(*usage, "output_tokens");
    parsed.cached_tokens = cache_read;
  }
  return parsed;
}

}  // namespace kestrel::llm
