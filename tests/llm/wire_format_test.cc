// The wire formats and retry rules as pure functions (llm/wire_format.h,
// llm/retry_policy.h), on literal bodies: no sockets.

#include <doctest.h>

#include <nlohmann/json.hpp>

#include "llm/retry_policy.h"
#include "llm/wire_format.h"

namespace kestrel::llm {
namespace {

using nlohmann::json;

LlmEndpoint Endpoint(std::string provider) {
  LlmEndpoint endpoint;
  endpoint.provider = std::move(provider);
  endpoint.model = "m-1";
  endpoint.base_url = "http://127.0.0.1:1/v1/";
  endpoint.api_key = "sk-secret";
  return endpoint;
}

LlmRequest Request() {
  LlmRequest request;
  request.system = "You write kernels.";
  request.messages = {{"user", "Make it fast."}};
  request.temperature = 0.5;
  request.max_tokens = 123;
  request.seed = 7;
  return request;
}

TEST_SUITE("wire_format") {
  TEST_CASE("OpenAI request: url, headers, body") {
    const WireRequest wire = BuildOpenAiRequest(Endpoint("openai"), Request());
    CHECK(wire.url == "http://127.0.0.1:1/v1/chat/completions");
    CHECK(std::find(wire.headers.begin(), wire.headers.end(), "Authorization: Bearer sk-secret") !=
          wire.headers.end());
    const json body = json::parse(wire.body);
    CHECK(body["model"] == "m-1");
    CHECK(body["max_tokens"] == 123);
    CHECK(body["seed"] == 7);
    CHECK(body["stream"] == false);
    REQUIRE(body["messages"].size() == 2);
    CHECK(body["messages"][0]["role"] == "system");
    CHECK(body["messages"][1]["content"] == "Make it fast.");

    LlmEndpoint newer = Endpoint("openai");
    newer.use_max_completion_tokens = true;
    const json body2 = json::parse(BuildOpenAiRequest(newer, Request()).body);
    CHECK(body2["max_completion_tokens"] == 123);
    CHECK_FALSE(body2.contains("max_tokens"));
  }

  TEST_CASE("Anthropic request: top-level system, version header, no seed") {
    LlmRequest request = Request();
    request.messages.insert(request.messages.begin(), {"system", "Be brief."});
    const WireRequest wire = BuildAnthropicRequest(Endpoint("anthropic"), request);
    CHECK(wire.url == "http://127.0.0.1:1/v1/messages");
    CHECK(std::find(wire.headers.begin(), wire.headers.end(), "x-api-key: sk-secret") !=
          wire.headers.end());
    CHECK(std::find(wire.headers.begin(), wire.headers.end(), "anthropic-version: 2023-06-01") !=
          wire.headers.end());
    const json body = json::parse(wire.body);
    CHECK(body["system"] == "You write kernels.\n\nBe brief.");
    REQUIRE(body["messages"].size() == 1);
    CHECK(body["messages"][0]["role"] == "user");
    CHECK(body["max_tokens"] == 123);
    CHECK_FALSE(body.contains("seed"));
  }

  TEST_CASE("OpenAI reply: text, finish reason, usage with cached tokens") {
    const ParsedReply parsed = ParseOpenAiReply(
        {200, R"({"choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"length"}],
                  "usage":{"prompt_tokens":10,"completion_tokens":5,
                           "prompt_tokens_details":{"cached_tokens":4}}})"});
    CHECK(parsed.kind == LlmErrorKind::kOk);
    CHECK(parsed.text == "hi");
    CHECK(parsed.truncated);
    CHECK(parsed.input_tokens == 10);
    CHECK(parsed.output_tokens == 5);
    CHECK(parsed.cached_tokens == 4);
  }

  TEST_CASE("OpenAI errors: rate limit, quota, auth, malformed") {
    CHECK(ParseOpenAiReply({429, R"({"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}})"})
              .kind == LlmErrorKind::kRateLimit);
    const ParsedReply quota = ParseOpenAiReply(
        {429, R"({"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}})"});
    CHECK(quota.kind == LlmErrorKind::kQuota);
    CHECK(quota.error.find("exceeded your current quota") != std::string::npos);
    CHECK(ParseOpenAiReply({401, R"({"error":{"message":"bad key"}})"}).kind == LlmErrorKind::kAuth);
    CHECK(ParseOpenAiReply({404, "<html>nope</html>"}).kind == LlmErrorKind::kBadRequest);
    CHECK(ParseOpenAiReply({503, "<html>busy</html>"}).kind == LlmErrorKind::kServer);
    CHECK(ParseOpenAiReply({200, "{not json"}).kind == LlmErrorKind::kMalformed);
    CHECK(ParseOpenAiReply({200, R"({"choices":[]})"}).kind == LlmErrorKind::kMalformed);
    CHECK(ParseOpenAiReply({200, R"({"choices":[{"message":{"content":5}}]})"}).kind ==
          LlmErrorKind::kMalformed);
  }

  TEST_CASE("OpenAI reasoning models: the limit as max_completion_tokens and no temperature") {
    LlmEndpoint reasoning = Endpoint("openai");
    reasoning.model = "gpt-5";
    reasoning.use_max_completion_tokens = true;
    reasoning.send_temperature = false;
    const json body = json::parse(BuildOpenAiRequest(reasoning, Request()).body);
    CHECK(body["max_completion_tokens"] == 123);
    CHECK_FALSE(body.contains("max_tokens"));
    CHECK_FALSE(body.contains("temperature"));
    CHECK(body["messages"].size() == 2);
    // Any other model: max_tokens and the request's temperature, as before.
    const json classic = json::parse(BuildOpenAiRequest(Endpoint("openai"), Request()).body);
    CHECK(classic["max_tokens"] == 123);
    CHECK_FALSE(classic.contains("max_completion_tokens"));
    CHECK(classic["temperature"] == 0.5);
    // "temperature": null reaches Anthropic too: the server's default.
    LlmEndpoint anthropic = Endpoint("anthropic");
    anthropic.send_temperature = false;
    const json claude = json::parse(BuildAnthropicRequest(anthropic, Request()).body);
    CHECK_FALSE(claude.contains("temperature"));
    CHECK(claude["max_tokens"] == 123);
    CHECK(json::parse(BuildAnthropicRequest(Endpoint("anthropic"), Request()).body)["temperature"] == 0.5);
  }

  TEST_CASE("which models are OpenAI's reasoning models") {
    for (const char* model : {"o1", "o1-mini", "o1-2024-12-17", "o3", "o3-mini", "o3-pro", "o4-mini", "gpt-5",
                              "gpt-5-mini", "gpt-5-nano", "gpt-5.1", "gpt-5-codex"}) {
      CAPTURE(model);
      CHECK(IsOpenAiReasoningModel(model));
    }
    for (const char* model : {"gpt-4.1-mini", "gpt-4o", "gpt-50", "o10", "llama-3-o1", "claude-sonnet-4-5", "local",
                              "openai/gpt-5", ""}) {
      CAPTURE(model);
      CHECK_FALSE(IsOpenAiReasoningModel(model));
    }
  }

  TEST_CASE("a prompt too long for the context is its own kind: not retried, and it does not stop the mutator") {
    struct Refusal {
      const char* server;
      int status;
      const char* body;
    };
    const Refusal too_long[] = {
        {"OpenAI", 400,
         R"({"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130012 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})"},
        {"vLLM", 400,
         R"({"object":"error","message":"This model's maximum context length is 32768 tokens. However, you requested 36012 tokens (20012 in the messages, 16000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400})"},
        {"llama.cpp", 400,
         R"({"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}})"},
        {"a proxy", 400, R"({"error":"Too many tokens in the prompt"})"},
        {"a gateway", 413, "<html><body>413 Request Entity Too Large</body></html>"},
    };
    for (const Refusal& refusal : too_long) {
      CAPTURE(refusal.server);
      const ParsedReply parsed = ParseOpenAiReply({refusal.status, refusal.body});
      CHECK(parsed.kind == LlmErrorKind::kContextLength);
      CHECK_FALSE(StopsMutator(parsed.kind));
      CHECK_FALSE(IsRetryable(parsed.kind));
      CHECK(parsed.error.find("HTTP " + std::to_string(refusal.status)) != std::string::npos);
    }
    // vLLM's error is read from its top-level message.
    CHECK(ParseOpenAiReply({too_long[1].status, too_long[1].body}).error ==
          "HTTP 400: This model's maximum context length is 32768 tokens. However, you requested 36012 tokens (20012 in "
          "the messages, 16000 in the completion). Please reduce the length of the messages or completion. (type "
          "BadRequestError)");
    CHECK(ParseAnthropicReply({400, R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215004 tokens > 200000 maximum"}})"})
              .kind == LlmErrorKind::kContextLength);
    CHECK(ParseAnthropicReply({413, R"({"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}})"})
              .kind == LlmErrorKind::kContextLength);
    CHECK(ToString(LlmErrorKind::kContextLength) == "context_length");

    // What is wrong with every request still stops the mutator.
    const ParsedReply unsupported = ParseOpenAiReply(
        {400, R"({"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}})"});
    CHECK(unsupported.kind == LlmErrorKind::kBadRequest);
    CHECK(StopsMutator(unsupported.kind));
    const ParsedReply unknown_model = ParseOpenAiReply(
        {404, R"({"error":{"message":"The model `gpt-9` does not exist or you do not have access to it.","type":"invalid_request_error","code":"model_not_found"}})"});
    CHECK(unknown_model.kind == LlmErrorKind::kBadRequest);
    CHECK(StopsMutator(unknown_model.kind));
    CHECK(ParseOpenAiReply({401, R"({"error":{"message":"Incorrect API key provided"}})"}).kind == LlmErrorKind::kAuth);
    CHECK(ParseAnthropicReply({404, R"({"type":"error","error":{"type":"not_found_error","message":"model: claude-9"}})"})
              .kind == LlmErrorKind::kBadRequest);
  }

  TEST_CASE("Anthropic reply: text blocks joined, stop reason, usage") {
    const ParsedReply parsed = ParseAnthropicReply(
        {200, R"({"type":"message","content":[{"type":"text","text":"a"},{"type":"tool_use"},{"type":"text","text":"b"}],
                  "stop_reason":"max_tokens","usage":{"input_tokens":3,"cache_read_input_tokens":2,"output_tokens":9}})"});
    CHECK(parsed.kind == LlmErrorKind::kOk);
    CHECK(parsed.text == "ab");
    CHECK(parsed.truncated);
    CHECK(parsed.input_tokens == 5);
    CHECK(parsed.cached_tokens == 2);
    CHECK(parsed.output_tokens == 9);
  }

  TEST_CASE("Anthropic errors: overloaded, rate limit, billing, auth") {
    CHECK(ParseAnthropicReply({529, R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"})
              .kind == LlmErrorKind::kOverloaded);
    CHECK(ParseAnthropicReply({429, R"({"type":"error","error":{"type":"rate_limit_error","message":"x"}})"})
              .kind == LlmErrorKind::kRateLimit);
    CHECK(ParseAnthropicReply({400, R"({"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low"}})"})
              .kind == LlmErrorKind::kQuota);
    CHECK(ParseAnthropicReply({401, R"({"type":"error","error":{"type":"authentication_error","message":"x"}})"})
              .kind == LlmErrorKind::kAuth);
    CHECK(ParseAnthropicReply({200, R"({"type":"message"})"}).kind == LlmErrorKind::kMalformed);
  }
}

TEST_SUITE("retry_policy") {
  TEST_CASE("retry-after parses seconds and refuses dates") {
    CHECK(ParseRetryAfter(" 1\r\n") == 1.0);
    CHECK(ParseRetryAfter("0.25") == 0.25);
    CHECK_FALSE(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT").has_value());
    CHECK_FALSE(ParseRetryAfter("-3").has_value());
  }

  TEST_CASE("full-jitter backoff grows and is capped") {
    CHECK(BackoffDelay(0, 1.0, 60.0, 0.999) == doctest::Approx(0.999));
    CHECK(BackoffDelay(3, 1.0, 60.0, 0.5) == doctest::Approx(4.0));
    CHECK(BackoffDelay(30, 1.0, 60.0, 0.5) == doctest::Approx(30.0));
    CHECK(BackoffDelay(2, 1.0, 60.0, 0.0) == 0.0);
    for (int i = 0; i < 100; ++i) {
      const double unit = JitterUnit();
      CHECK((unit >= 0.0 && unit < 1.0));
    }
  }

  TEST_CASE("decisions: retryable kinds within tries and deadline only") {
    CHECK(DecideRetry(LlmErrorKind::kRateLimit, 1, 3, 2.0, 100, 1, 60, 0.5).wait_s == 2.0);
    CHECK(DecideRetry(LlmErrorKind::kServer, 1, 3, std::nullopt, 100, 1, 60, 0.5).retry);
    CHECK_FALSE(DecideRetry(LlmErrorKind::kServer, 3, 3, std::nullopt, 100, 1, 60, 0.5).retry);
    CHECK_FALSE(DecideRetry(LlmErrorKind::kRateLimit, 1, 3, 50.0, 10, 1, 60, 0.5).retry);
    for (LlmErrorKind kind : {LlmErrorKind::kAuth, LlmErrorKind::kQuota, LlmErrorKind::kBadRequest,
                              LlmErrorKind::kMalformed}) {
      const RetryDecision decision = DecideRetry(kind, 1, 5, std::nullopt, 100, 1, 60, 0.5);
      CHECK_FALSE(decision.retry);
      CHECK(decision.why_not.empty());
    }
  }

  TEST_CASE("KindOfStatus") {
    CHECK(KindOfStatus(200) == LlmErrorKind::kOk);
    CHECK(KindOfStatus(408) == LlmErrorKind::kTimeout);
    CHECK(KindOfStatus(409) == LlmErrorKind::kServer);
    CHECK(KindOfStatus(403) == LlmErrorKind::kAuth);
    CHECK(KindOfStatus(529) == LlmErrorKind::kOverloaded);
    CHECK(KindOfStatus(502) == LlmErrorKind::kServer);
    CHECK(KindOfStatus(422) == LlmErrorKind::kBadRequest);
    CHECK(KindOfStatus(413) == LlmErrorKind::kContextLength);
  }

  TEST_CASE("a request's deadline follows its attempts' timeout, and never under 15 minutes") {
    CHECK(RequestDeadline(5) == 900.0);
    CHECK(RequestDeadline(300) == 900.0);
    CHECK(RequestDeadline(1200) == 3600.0);  // before: 900 s for every timeout
    CHECK(RequestDeadline(86400) == 3 * 86400.0);
  }

  TEST_CASE("a wait past the deadline reads as a duration") {
    const RetryDecision decision = DecideRetry(LlmErrorKind::kRateLimit, 1, 5, 90.0, 30, 1, 60, 0.5);
    CHECK_FALSE(decision.retry);
    CHECK(decision.why_not == "the request's deadline leaves no time to wait 1m30s and try again");
  }
}

}  // namespace
}  // namespace kestrel::llm
