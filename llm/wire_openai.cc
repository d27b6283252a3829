// The OpenAI-compatible chat completions wire format (LLM.md), as served by
// OpenAI, vLLM, llama.cpp's server, Ollama (/v1), OpenRouter and others.

#include <string>

#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "llm/wire_format.h"

namespace kestrel::llm {
namespace {

using nlohmann::json;

std::string StringOr(const json& object, const char* key) {
  if (!object.is_object()) return "";
  const auto it = object.find(key);
  if (it == object.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_null()) return "";
  return it->dump();
}

std::int64_t IntOr(const json& object, const char* key) {
  if (!object.is_object()) return 0;
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<std::int64_t>() : 0;
}

// {"error": {"message", "type", "code"}} -> kind and message.
ParsedReply ParseError(int http_status, const json& body, const std::string& raw) {
  ParsedReply parsed;
  parsed.kind = KindOfStatus(http_status);
  const json* error = body.is_object() && body.contains("error") ? &body["error"] : nullptr;
  std::string message, type, code;
  if (error != nullptr && error->is_object()) {
    message = StringOr(*error, "message");
    type = StringOr(*error, "type");
    code = StringOr(*error, "code");
  } else if (error != nullptr && error->is_string()) {
    message = error->get<std::string>();  // llama.cpp, some proxies
  } else if (body.is_object() && body.contains("message") && body["message"].is_string()) {
    message = body["message"].get<std::string>();  // vLLM: {"object": "error", "message", "type", "code"}
    type = StringOr(body, "type");
  } else {
    message = Clip(raw);
  }
  const bool quota = type == "insufficient_quota" || code == "insufficient_quota" ||
                     code == "billing_hard_limit_reached" || type == "billing_error";
  if (quota && (http_status == 429 || http_status == 402 || http_status == 403 ||
                http_status == 400)) {
    parsed.kind = LlmErrorKind::kQuota;
  } else if (parsed.kind == LlmErrorKind::kBadRequest && SaysContextLength(raw)) {
    parsed.kind = LlmErrorKind::kContextLength;
  }
  parsed.error = "HTTP " + std::to_string(http_status) + ": " + message;
  if (!type.empty()) parsed.error += " (type " + type + ")";
  if (!code.empty() && code != type) parsed.error += " (code " + code + ")";
  return parsed;
}

}  // namespace

WireRequest BuildOpenAiRequest(const LlmEndpoint& endpoint, const LlmRequest& request) {
  json messages = json::array();
  if (!request.system.empty()) {
    messages.push_back({{"role", "system"}, {"content", request.system}});
  }
  for (const LlmMessage& message : request.messages) {
    messages.push_back({{"role", message.role}, {"content", message.content}});
  }
  json body = {{"model", endpoint.model}, {"messages", std::move(messages)}, {"stream", false}};
  if (endpoint.send_temperature) body["temperature"] = request.temperature;
  body[endpoint.use_max_completion_tokens ? "max_completion_tokens" : "max_tokens"] =
      request.max_tokens;
  if (request.seed) body["seed"] = *request.seed;

  WireRequest wire;
  wire.url = JoinUrl(endpoint.base_url, "/chat/completions");
  wire.headers = {"Content-Type: application/json", "Accept: application/json"};
  if (!endpoint.api_key.empty()) {
    wire.headers.push_back("Authorization: Bearer " + endpoint.api_key);
  }
  // Invalid UTF-8 in a prompt is replaced, never a throw.
  wire.body = JsonText(body);
  return wire;
}

ParsedReply ParseOpenAiReply(const WireReply& reply) {
  const json body = json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
  const bool success = reply.http_status >= 200 && reply.http_status < 300;
  if (!success) return ParseError(reply.http_status, body, reply.body);

  ParsedReply parsed;
  if (body.is_discarded() || !body.is_object()) {
    parsed.kind = LlmErrorKind::kMalformed;
    parsed.error = "reply is not a JSON object: " + Clip(reply.body);
    return parsed;
  }
  if (body.contains("error") && !body.contains("choices")) {
    // Some proxies answer 200 with an error object.
    parsed = ParseError(reply.http_status, body, reply.body);
    parsed.kind = LlmErrorKind::kMalformed;
    return parsed;
  }
  const auto choices = body.find("choices");
  if (choices == body.end() || !choices->is_array() || choices->empty() ||
      !(*choices)[0].is_object()) {
    parsed.kind = LlmErrorKind::kMalformed;
    parsed.error = "reply has no choices[0]: " + Clip(reply.body);
    return parsed;
  }
  const json& choice = (*choices)[0];
  const auto message = choice.find("message");
  if (message == choice.end() || !message->is_object()) {
    parsed.kind = LlmErrorKind::kMalformed;
    parsed.error = "reply has no choices[0].message: " + Clip(reply.body);
    return parsed;
  }
  const auto content = message->find("content");
  if (content != message->end() && content->is_string()) {
    parsed.text = content->get<std::string>();
  } else if (content != message->end() && !content->is_null()) {
    parsed.kind = LlmErrorKind::kMalformed;
    parsed.error = "choices[0].message.content is not a string";
    return parsed;
  }
  parsed.finish_reason = StringOr(choice, "finish_reason");
  parsed.truncated = parsed.finish_reason == "length";
  if (const auto usage = body.find("usage"); usage != body.end() && usage->is_object()) {
    parsed.input_tokens = IntOr(*usage, "prompt_tokens");
    parsed.output_tokens = IntOr(*usage, "completion_tokens");
    if (const auto details = usage->find("prompt_tokens_details");
        details != usage->end() && details->is_object()) {
      parsed.cached_tokens = IntOr(*details, "cached_tokens");
    }
  }
  return parsed;
}

}  // namespace kestrel::llm
