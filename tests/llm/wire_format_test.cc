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
  }
}

}  // namespace
}  // namespace kestrel::llm
