// LlmClient against real HTTP servers on loopback (scripted_server.h): both
// wire formats, retries, timeouts, the concurrency cap, key hygiene.

#include "llm/llm_client.h"

#include <doctest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include <nlohmann/json.hpp>

#include "llm/code_block.h"
#include "tests/llm/scripted_server.h"

namespace kestrel {
namespace {

using nlohmann::json;
using testing::Reply;
using testing::ScriptedServer;
using testing::SilentServer;

constexpr const char* kKey = "sk-test-5ecret-KEY-0123456789";
constexpr const char* kCode = "```cpp\\nvoid k(float* x) {\\n  x[0] = 1;\\n}\\n```";

LlmEndpoint Endpoint(const std::string& provider, const std::string& base_url) {
  LlmEndpoint endpoint;
  endpoint.provider = provider;
  endpoint.model = "test-model";
  endpoint.base_url = base_url;
  endpoint.api_key = kKey;
  endpoint.timeout_s = 5;
  endpoint.price_input_per_mtok = 2.0;
  endpoint.price_output_per_mtok = 10.0;
  endpoint.max_tries = 4;
  endpoint.backoff_base_s = 0.01;  // fast tests; production uses 1 s / 60 s
  endpoint.backoff_cap_s = 0.05;
  endpoint.total_deadline_s = 20;
  return endpoint;
}

std::unique_ptr<LlmClient> Client(const LlmEndpoint& endpoint) {
  ::setenv("NO_PROXY", "127.0.0.1", 1);  // loopback servers, whatever the environment says
  ::setenv("no_proxy", "127.0.0.1", 1);
  auto client = LlmClient::Make(endpoint);
  REQUIRE(client.has_value());
  return std::move(*client);
}

LlmRequest Request() {
  LlmRequest request;
  request.system = "You write fast kernels.";
  request.messages = {{"user", "Rewrite k."}};
  request.max_tokens = 512;
  return request;
}

std::string OpenAiOk(const std::string& finish = "stop") {
  return std::string(R"({"choices":[{"message":{"role":"assistant","content":"Here:\n)") + kCode +
         R"("},"finish_reason":")" + finish +
         R"("}],"usage":{"prompt_tokens":1000,"completion_tokens":500,"prompt_tokens_details":{"cached_tokens":200}}})";
}

std::string AnthropicOk(const std::string& stop = "end_turn") {
  return std::string(R"({"type":"message","content":[{"type":"text","text":"Here:\n)") + kCode +
         R"("}],"stop_reason":")" + stop + R"(","usage":{"input_tokens":1000,"output_tokens":500}})";
}

std::string OkBody(const std::string& provider) {
  return provider == "openai" ? OpenAiOk() : AnthropicOk();
}

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void CheckNoKey(const LlmResponse& response) {
  CHECK(response.error.find(kKey) == std::string::npos);
  CHECK(response.text.find(kKey) == std::string::npos);
  CHECK(response.finish_reason.find(kKey) == std::string::npos);
}

TEST_SUITE("llm_client") {
  TEST_CASE("a normal reply: text, tokens, cost and the request sent") {
    for (const std::string provider : {"openai", "anthropic"}) {
      CAPTURE(provider);
      ScriptedServer server({{200, OkBody(provider)}});
      const LlmResponse response = Client(Endpoint(provider, server.BaseUrl()))->Complete(Request());
      REQUIRE_MESSAGE(response.ok(), response.error);
      CHECK(response.http_status == 200);
      CHECK(response.retries == 0);
      CHECK_FALSE(response.truncated);
      CHECK(response.finish_reason == (provider == "openai" ? "stop" : "end_turn"));
      CHECK(response.input_tokens == 1000);
      CHECK(response.output_tokens == 500);
      CHECK(response.cached_tokens == (provider == "openai" ? 200 : 0));
      CHECK(response.cost_usd == doctest::Approx(0.002 + 0.005));
      CHECK(response.latency_s > 0.0);
      const auto code = ExtractCode(response.text, "k");
      REQUIRE(code.has_value());
      CHECK(*code == "void k(float* x) {\n  x[0] = 1;\n}\n");

      const auto seen = server.seen();
      REQUIRE(seen.size() == 1);
      const json body = json::parse(seen[0].body);
      CHECK(body["model"] == "test-model");
      CHECK(body["max_tokens"] == 512);
      if (provider == "openai") {
        CHECK(seen[0].path == "/v1/chat/completions");
        CHECK(seen[0].authorization == std::string("Bearer ") + kKey);
        CHECK(body["messages"][0]["role"] == "system");
        CHECK(body["messages"][1]["content"] == "Rewrite k.");
      } else {
        CHECK(seen[0].path == "/v1/messages");
        CHECK(seen[0].x_api_key == kKey);
        CHECK(seen[0].anthropic_version == "2023-06-01");
        CHECK(body["system"] == "You write fast kernels.");
        CHECK(body["messages"][0]["content"] == "Rewrite k.");
      }
    }
  }

  TEST_CASE("a reply cut at the token limit is marked truncated") {
    for (const std::string provider : {"openai", "anthropic"}) {
      CAPTURE(provider);
      ScriptedServer server({{200, provider == "openai" ? OpenAiOk("length") : AnthropicOk("max_tokens")}});
      const LlmResponse response = Client(Endpoint(provider, server.BaseUrl()))->Complete(Request());
      CHECK(response.ok());
      CHECK(response.truncated);
    }
  }

  TEST_CASE("malformed JSON is an error and is not retried") {
    for (const std::string provider : {"openai", "anthropic"}) {
      CAPTURE(provider);
      ScriptedServer server({{200, "{\"choices\": [ oops"}});
      const LlmResponse response = Client(Endpoint(provider, server.BaseUrl()))->Complete(Request());
      CHECK(response.kind == LlmErrorKind::kMalformed);
      CHECK(response.error.find("not a JSON object") != std::string::npos);
      CHECK(server.requests() == 1);
    }
  }

  TEST_CASE("429 with retry-after waits at least that long, then succeeds") {
    ScriptedServer server({{429, R"({"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}})",
                            {{"retry-after", "1"}}},
                           {200, OpenAiOk()}});
    const auto start = std::chrono::steady_clock::now();
    const LlmResponse response = Client(Endpoint("openai", server.BaseUrl()))->Complete(Request());
    CHECK(response.ok());
    CHECK(response.retries == 1);
    CHECK(Seconds(start) >= 1.0);
    CHECK(Seconds(start) < 3.0);
    CHECK(server.requests() == 2);
  }

  TEST_CASE("500 then success, and Anthropic 529 overloaded then success") {
    for (const std::string provider : {"openai", "anthropic"}) {
      CAPTURE(provider);
      ScriptedServer server({{500, R"({"error":{"message":"boom"}})"}, {200, OkBody(provider)}});
      const LlmResponse response = Client(Endpoint(provider, server.BaseUrl()))->Complete(Request());
      CHECK(response.ok());
      CHECK(response.retries == 1);
    }
    ScriptedServer server(
        {{529, R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"},
         {529, R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"},
         {200, AnthropicOk()}});
    const LlmResponse response = Client(Endpoint("anthropic", server.BaseUrl()))->Complete(Request());
    CHECK(response.ok());
    CHECK(response.retries == 2);
    CHECK(server.requests() == 3);
  }

  TEST_CASE("retries are bounded: a server that keeps failing") {
    ScriptedServer server({{503, "<html>unavailable</html>"}});
    const LlmResponse response = Client(Endpoint("openai", server.BaseUrl()))->Complete(Request());
    CHECK(response.kind == LlmErrorKind::kServer);
    CHECK(response.http_status == 503);
    CHECK(response.retries == 3);
    CHECK(server.requests() == 4);
    CHECK(response.error.find("gave up after 4 tries") != std::string::npos);
  }

  TEST_CASE("401 and 400 are not retried") {
    for (const std::string provider : {"openai", "anthropic"}) {
      CAPTURE(provider);
      ScriptedServer server(
          {{401, std::string(R"({"type":"error","error":{"type":"authentication_error","message":"Incorrect API key provided: )") +
                     kKey + R"("}})"}});
      const LlmResponse response = Client(Endpoint(provider, server.BaseUrl()))->Complete(Request());
      CHECK(response.kind == LlmErrorKind::kAuth);
      CHECK(StopsMutator(response.kind));
      CHECK(response.http_status == 401);
      CHECK(response.retries == 0);
      CHECK(server.requests() == 1);
      CHECK(response.error.find("Incorrect API key provided: [redacted]") != std::string::npos);
      CheckNoKey(response);
    }
    ScriptedServer server({{400, R"({"error":{"message":"context too long","type":"invalid_request_error"}})"}});
    const LlmResponse response = Client(Endpoint("openai", server.BaseUrl()))->Complete(Request());
    CHECK(response.kind == LlmErrorKind::kBadRequest);
    CHECK(server.requests() == 1);
  }

  TEST_CASE("a prompt too long for the context fails that request only, unretried; the next one goes through") {
    const std::string vllm =
        R"({"object":"error","message":"This model's maximum context length is 32768 tokens. However, you requested 36012 tokens (20012 in the messages, 16000 in the completion).","type":"BadRequestError","param":null,"code":400})";
    ScriptedServer server({{400, vllm}, {200, OpenAiOk()}});
    const auto client = Client(Endpoint("openai", server.BaseUrl()));
    const LlmResponse too_long = client->Complete(Request());
    CHECK(too_long.kind == LlmErrorKind::kContextLength);
    CHECK_FALSE(StopsMutator(too_long.kind));
    CHECK(too_long.http_status == 400);
    CHECK(too_long.retries == 0);
    CHECK(server.requests() == 1);
    CHECK(too_long.error.find("maximum context length is 32768 tokens") != std::string::npos);
    const LlmResponse next = client->Complete(Request());
    CHECK(next.ok());
    CHECK(server.requests() == 2);

    ScriptedServer anthropic({{413, R"({"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}})"}});
    const LlmResponse too_large = Client(Endpoint("anthropic", anthropic.BaseUrl()))->Complete(Request());
    CHECK(too_large.kind == LlmErrorKind::kContextLength);
    CHECK(anthropic.requests() == 1);
  }

  TEST_CASE("a reasoning model's request carries max_completion_tokens and no temperature") {
    ScriptedServer server({{200, OpenAiOk()}});
    LlmEndpoint endpoint = Endpoint("openai", server.BaseUrl());
    endpoint.model = "o4-mini";
    endpoint.use_max_completion_tokens = true;
    endpoint.send_temperature = false;
    REQUIRE(Client(endpoint)->Complete(Request()).ok());
    const json body = json::parse(server.seen().at(0).body);
    CHECK(body["model"] == "o4-mini");
    CHECK(body["max_completion_tokens"] == 512);
    CHECK_FALSE(body.contains("max_tokens"));
    CHECK_FALSE(body.contains("temperature"));
  }

  TEST_CASE("a timeout's message gives the attempt's duration as a person writes it") {
    ScriptedServer server({{200, OpenAiOk(), {}, 0.6}});
    LlmEndpoint endpoint = Endpoint("openai", server.BaseUrl());
    endpoint.timeout_s = 0.3;
    endpoint.max_tries = 1;
    const LlmResponse response = Client(endpoint)->Complete(Request());
    CHECK(response.kind == LlmErrorKind::kTimeout);
    CHECK_MESSAGE(response.error.find("(after 0.3s)") != std::string::npos, response.error);
    CHECK(response.error.find("000000") == std::string::npos);  // before: "(after 0.300000 s)"
  }

  TEST_CASE("429 insufficient_quota is not retried") {
    ScriptedServer server({{429, R"({"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}})",
                            {{"retry-after", "0"}}}});
    const LlmResponse response = Client(Endpoint("openai", server.BaseUrl()))->Complete(Request());
    CHECK(response.kind == LlmErrorKind::kQuota);
    CHECK(StopsMutator(response.kind));
    CHECK(response.error.find("exceeded your current quota") != std::string::npos);
    CHECK(server.requests() == 1);
  }

  TEST_CASE("a reply slower than the timeout ends as a timeout, within bounds") {
    for (const std::string provider : {"openai", "anthropic"}) {
      CAPTURE(provider);
      ScriptedServer server({{200, OkBody(provider), {}, 0.9}});
      LlmEndpoint endpoint = Endpoint(provider, server.BaseUrl());
      endpoint.timeout_s = 0.3;
      endpoint.max_tries = 2;
      const auto start = std::chrono::steady_clock::now();
      const LlmResponse response = Client(endpoint)->Complete(Request());
      const double elapsed = Seconds(start);
      CHECK(response.kind == LlmErrorKind::kTimeout);
      CHECK(response.http_status == 0);
      CHECK(response.retries == 1);
      CHECK(elapsed >= 0.6);
      CHECK(elapsed < 1.1);
      CheckNoKey(response);
    }
  }

  TEST_CASE("a connection that never answers ends by the request's deadline") {
    SilentServer server;
    LlmEndpoint endpoint = Endpoint("openai", server.BaseUrl());
    endpoint.timeout_s = 0.4;
    endpoint.max_tries = 100;
    endpoint.total_deadline_s = 1.0;
    const auto start = std::chrono::steady_clock::now();
    const LlmResponse response = Client(endpoint)->Complete(Request());
    const double elapsed = Seconds(start);
    CHECK(response.kind == LlmErrorKind::kTimeout);
    CHECK(response.retries >= 1);
    CHECK(elapsed >= 0.9);
    CHECK(elapsed < 1.5);
    CheckNoKey(response);
  }

  TEST_CASE("a cancelled request ends promptly, in flight or in backoff") {
    SilentServer silent;
    LlmEndpoint endpoint = Endpoint("openai", silent.BaseUrl());
    endpoint.timeout_s = 10;
    const auto start = std::chrono::steady_clock::now();
    LlmRequest request = Request();
    request.cancelled = [&] { return Seconds(start) > 0.3; };
    const LlmResponse in_flight = Client(endpoint)->Complete(request);
    CHECK(in_flight.kind == LlmErrorKind::kCancelled);
    CHECK_FALSE(IsRetryable(in_flight.kind));
    CHECK(in_flight.latency_s < 2.0);  // libcurl polls about once a second when idle

    ScriptedServer server({{503, "busy", {{"retry-after", "5"}}}});
    const auto start2 = std::chrono::steady_clock::now();
    request.cancelled = [&] { return Seconds(start2) > 0.3; };
    const LlmResponse in_backoff = Client(Endpoint("openai", server.BaseUrl()))->Complete(request);
    CHECK(in_backoff.kind == LlmErrorKind::kCancelled);
    CHECK(in_backoff.http_status == 503);
    CHECK(in_backoff.latency_s < 0.6);
    CHECK(server.requests() == 1);
  }

  TEST_CASE("a refused connection is retried, then reported") {
    int port = 0;
    {
      SilentServer closed;  // take a free port, then close it
      port = std::stoi(closed.BaseUrl().substr(17));
    }
    LlmEndpoint endpoint = Endpoint("anthropic", "http://127.0.0.1:" + std::to_string(port) + "/v1");
    endpoint.max_tries = 3;
    const LlmResponse response = Client(endpoint)->Complete(Request());
    CHECK(response.kind == LlmErrorKind::kConnection);
    CHECK(response.retries == 2);
    CheckNoKey(response);
  }

  TEST_CASE("the concurrency cap holds server side") {
    ScriptedServer server({{200, OpenAiOk(), {}, 0.2}});
    LlmEndpoint endpoint = Endpoint("openai", server.BaseUrl());
    endpoint.max_concurrency = 2;
    const auto client = Client(endpoint);
    std::vector<std::thread> threads;
    std::atomic<int> ok{0};
    for (int i = 0; i < 6; ++i) {
      threads.emplace_back([&] { ok += client->Complete(Request()).ok() ? 1 : 0; });
    }
    for (std::thread& thread : threads) thread.join();
    CHECK(ok == 6);
    CHECK(server.requests() == 6);
    CHECK(server.max_in_flight() == 2);
  }

  TEST_CASE("the API key never appears in returned fields") {
    ScriptedServer server(
        {{500, std::string(R"({"error":{"message":"echo )") + kKey + R"("}})"},
         {200, std::string(R"({"choices":[{"message":{"content":"key=)") + kKey +
                   R"("},"finish_reason":")" + kKey + R"("}]})"}});
    const LlmResponse response = Client(Endpoint("openai", server.BaseUrl()))->Complete(Request());
    CHECK(response.ok());
    CHECK(response.text == "key=[redacted]");
    CheckNoKey(response);
  }

  TEST_CASE("Make validates the endpoint; ReadApiKey names the variable, not the key") {
    CHECK_FALSE(LlmClient::Make(Endpoint("gemini", "http://127.0.0.1:1")).has_value());
    CHECK_FALSE(LlmClient::Make(Endpoint("openai", "127.0.0.1:1")).has_value());
    LlmEndpoint bad_key = Endpoint("openai", "http://127.0.0.1:1");
    bad_key.api_key = "sk\r\nX-Evil: 1";
    CHECK_FALSE(LlmClient::Make(bad_key).has_value());
    LlmEndpoint no_tries = Endpoint("openai", "http://127.0.0.1:1");
    no_tries.max_tries = 0;
    CHECK_FALSE(LlmClient::Make(no_tries).has_value());

    ::unsetenv("KESTREL_TEST_LLM_KEY");
    const auto missing = ReadApiKey("KESTREL_TEST_LLM_KEY");
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().IsInvalidArgument());
    CHECK(missing.error().message().find("KESTREL_TEST_LLM_KEY") != std::string::npos);
    ::setenv("KESTREL_TEST_LLM_KEY", kKey, 1);
    const auto present = ReadApiKey("KESTREL_TEST_LLM_KEY");
    REQUIRE(present.has_value());
    CHECK(*present == kKey);
    CHECK(ReadApiKey("").value() == "");
    ::unsetenv("KESTREL_TEST_LLM_KEY");
  }
}

}  // namespace
}  // namespace kestrel
