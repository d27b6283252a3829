// The LLM mutator against a loopback server (scripted_server.h), with the
// endpoint its config makes (EndpointFor): a prompt too long for the model's
// context declines one expansion and the mutator goes on, while a failure
// that every request would meet stops it; an OpenAI reasoning model is sent
// max_completion_tokens and no temperature.

#include "search/mutators/llm_mutator.h"

#include <doctest.h>

#include <cstdlib>
#include <memory>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/llm/scripted_server.h"

namespace kestrel {
namespace {

using nlohmann::json;
using testing::Reply;
using testing::ScriptedServer;

Reply Kernel() {
  const json content = "Here:\n```cpp\nvoid k(float* x) {\n  x[0] = 1;\n}\n```\n";
  return {200, R"({"choices":[{"message":{"role":"assistant","content":)" + content.dump() +
                   R"(},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":200}})"};
}

// vLLM's answer to a prompt longer than the model's context.
Reply TooLong() {
  return {400,
          R"({"object":"error","message":"This model's maximum context length is 32768 tokens. However, you requested 36012 tokens (20012 in the messages, 16000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400})"};
}

MutatorConfig LlmConfig(const ScriptedServer& server, const std::string& model = "served-model") {
  ::setenv("NO_PROXY", "127.0.0.1", 1);  // loopback, whatever the environment says
  ::setenv("no_proxy", "127.0.0.1", 1);
  MutatorConfig config;
  config.kind = "llm";
  config.provider = "openai";
  config.model = model;
  config.base_url = server.BaseUrl();
  config.timeout_s = 5;
  config.max_tokens = 2000;
  config.combine_share = 0;
  return config;
}

// An llm mutator of `config` with its real client, for a one-function task.
class Fixture {
 public:
  explicit Fixture(const MutatorConfig& config) {
    auto client = LlmClient::Make(EndpointFor(config, ""));
    REQUIRE(client.has_value());
    auto task = std::make_shared<Task>();
    task->name = "t";
    task->language = "cpp";
    task->entry = "k";
    mutator_ = MakeLlmMutator(config, std::shared_ptr<LlmClient>(std::move(*client)),
                              LlmContext{task, {}, 1, std::make_shared<Budget>(BudgetConfig{})});
  }

  MutationResult Expand() {
    std::mt19937_64 rng(++expansions_);
    const ParentView parent{1, Candidate{"void k(float* x) { x[0] = 0; }\n", {}, "c++", {}}};
    return mutator_->Expand(parent, rng, [](const std::string&) { return false; });
  }

 private:
  std::unique_ptr<Mutator> mutator_;
  std::uint64_t expansions_ = 0;
};

TEST_SUITE("llm_mutator") {
  TEST_CASE("a prompt too long for the context declines that expansion, recorded, and the mutator goes on") {
    ScriptedServer server({TooLong(), Kernel()});
    Fixture fixture(LlmConfig(server));
    const MutationResult declined = fixture.Expand();
    CHECK_FALSE(declined.proposal);
    CHECK(declined.stop_reason.empty());  // before: "the llm mutator (...) stopped: bad_request: ..."
    CHECK_FALSE(declined.exhausted);
    CHECK_FALSE(declined.budget_spent);
    REQUIRE(declined.calls.size() == 1);  // stored with its status and reason
    CHECK(declined.calls[0].http_status == 400);
    CHECK(declined.calls[0].error.find("maximum context length is 32768 tokens") != std::string::npos);
    CHECK(declined.note.find("maximum context length") != std::string::npos);

    for (int i = 0; i < 2; ++i) {
      const MutationResult made = fixture.Expand();
      CHECK(made.proposal);
      CHECK(made.stop_reason.empty());
    }
    CHECK(server.requests() == 3);
  }

  TEST_CASE("a request every call would get wrong still stops the mutator") {
    ScriptedServer server(
        {{404, R"({"error":{"message":"The model `served-model` does not exist.","type":"invalid_request_error","code":"model_not_found"}})"},
         Kernel()});
    Fixture fixture(LlmConfig(server));
    const MutationResult stopped = fixture.Expand();
    CHECK_FALSE(stopped.proposal);
    CHECK(stopped.stop_reason.find("bad_request") != std::string::npos);
    CHECK(stopped.exhausted);
    const MutationResult after = fixture.Expand();
    CHECK_FALSE(after.proposal);
    CHECK(server.requests() == 1);  // no request after the stop
  }

  TEST_CASE("an OpenAI reasoning model is sent max_completion_tokens and no temperature; another model both as before") {
    ScriptedServer reasoning({Kernel()});
    Fixture(LlmConfig(reasoning, "gpt-5")).Expand();
    REQUIRE(reasoning.requests() == 1);
    const json sent = json::parse(reasoning.seen()[0].body);
    CHECK(sent["model"] == "gpt-5");
    CHECK(sent["max_completion_tokens"] == 2000);
    CHECK_FALSE(sent.contains("max_tokens"));
    CHECK_FALSE(sent.contains("temperature"));

    ScriptedServer classic({Kernel()});
    Fixture(LlmConfig(classic, "gpt-4.1-mini")).Expand();
    REQUIRE(classic.requests() == 1);
    const json body = json::parse(classic.seen()[0].body);
    CHECK(body["max_tokens"] == 2000);
    CHECK_FALSE(body.contains("max_completion_tokens"));
    CHECK(body["temperature"] == 0.7);
  }
}

}  // namespace
}  // namespace kestrel
