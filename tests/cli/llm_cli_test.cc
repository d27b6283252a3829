// The `kestrel` binary with an LLM mutator against a scripted
// OpenAI-compatible server on loopback: `kestrel show NODE --prompt` prints
// the exchange that made a node, and `kestrel doctor --config` sends each
// configured endpoint a tiny request and reports it.

#include <doctest.h>
#include <stdlib.h>

#include <string>

#include <nlohmann/json.hpp>

#include "cli_workspace.h"
#include "testing.h"
#include "tests/llm/scripted_server.h"

using namespace kestrel;
using nlohmann::json;
using testing::Exec;
using testing::Reply;
using testing::ScriptedServer;
using testing::Workspace;

namespace {

constexpr char kKeyEnv[] = "KESTREL_LLM_CLI_TEST_KEY";

// An honest axpy the reply carries: four accumulators' worth of unrolling.
constexpr char kFasterAxpy[] = R"(#include <cstdint>
void axpy(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    y[i] = 2.0f * x[i] + 1.0f;
    y[i + 1] = 2.0f * x[i + 1] + 1.0f;
    y[i + 2] = 2.0f * x[i + 2] + 1.0f;
    y[i + 3] = 2.0f * x[i + 3] + 1.0f;
  }
  for (; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;
}
)";

Reply Chat(const std::string& content) {
  return {200, json{{"choices", {{{"message", {{"role", "assistant"}, {"content", content}}}, {"finish_reason", "stop"}}}},
                    {"usage", {{"prompt_tokens", 900}, {"completion_tokens", 150}}}}
                   .dump()};
}

// A run config with one llm mutator on `server`, written into the workspace.
std::string WriteConfig(Workspace& workspace, const ScriptedServer& server) {
  ::setenv(kKeyEnv, "sk-cli-test", 1);
  ::setenv("NO_PROXY", "127.0.0.1", 1);
  ::setenv("no_proxy", "127.0.0.1", 1);
  const json config = {
      {"task", "affine"},
      {"mutators",
       {{{"kind", "llm"}, {"provider", "openai"}, {"model", "scripted-model"}, {"base_url", server.BaseUrl()},
         {"api_key_env", kKeyEnv}, {"timeout_s", 10}, {"max_tokens", 1000}}}},
      {"evaluator", {{"min_time", 0.02}, {"min_samples", 3}}},
      {"budget", {{"evaluations", 2}}},
      {"parallel", {{"max_in_flight", 1}}}};
  const auto path = workspace.path() / "llm.json";
  testing::WriteFile(path, config.dump(2));
  return path.string();
}

}  // namespace

TEST_SUITE("cli") {
  TEST_CASE("kestrel show NODE --prompt prints the prompt and reply that made the node") {
    // The seed is profiled (affine states its flops and bytes), so the
    // analyst reads it first; the mutation follows its first recommendation.
    ScriptedServer server({Chat(R"({"bottlenecks": [{"name": "one element per iteration", "evidence": "scalar"}],
                                    "recommendations": [{"change": "unroll by four", "expected_gain": "1.3x"},
                                                        {"change": "vectorize", "expected_gain": "2x"}]})"),
                           Chat("Unrolled by four:\n```cpp\n" + std::string(kFasterAxpy) + "```\n")});
    Workspace workspace;
    const std::string config = WriteConfig(workspace, server);
    const Exec run = workspace.Run({"run", config, "--quiet", "--json"});
    REQUIRE_MESSAGE(run.code == 0, run.err);
    REQUIRE(server.requests() >= 2);

    const json best = json::parse(workspace.Run({"best", "--task", "affine", "--json", "--top", "10"}).out);
    std::int64_t llm_node = 0, seed_node = 0;
    for (const auto& row : best) {
      const std::string mutation = row.at("mutation").get<std::string>();
      if (mutation.rfind("llm:scripted-model", 0) == 0) llm_node = row.at("node").get<std::int64_t>();
      if (mutation.rfind("seed:", 0) == 0) seed_node = row.at("node").get<std::int64_t>();
    }
    REQUIRE(llm_node > 0);
    REQUIRE(seed_node > 0);
    for (const auto& row : best) {
      if (row.at("node") == llm_node) CHECK(row.at("mutation") == "llm:scripted-model:rec 1/2: unroll by four");
    }

    const Exec shown = workspace.Run({"show", std::to_string(llm_node), "--prompt"});
    REQUIRE_MESSAGE(shown.code == 0, shown.err);
    CHECK(shown.out.find("scripted-model") != std::string::npos);
    CHECK(shown.out.find("900 in / 150 out tokens") != std::string::npos);
    CHECK(shown.out.find("--- system ---") != std::string::npos);
    CHECK(shown.out.find("--- user ---") != std::string::npos);
    CHECK(shown.out.find("void axpy(const float* x, float* y, int64_t n)") != std::string::npos);  // the parent, in the prompt
    CHECK(shown.out.find("--- reply ---\nUnrolled by four:") != std::string::npos);
    CHECK(shown.out.find("sk-cli-test") == std::string::npos);

    const json document = json::parse(workspace.Run({"show", std::to_string(llm_node), "--json"}).out);
    REQUIRE(document.at("llm_calls").size() == 1);
    CHECK(document.at("llm_calls")[0].at("purpose") == "mutate");
    CHECK(document.at("llm_calls")[0].at("prompt").is_array());
    CHECK(document.at("llm_calls")[0].at("model") == "scripted-model");

    // The seed was not made by a call; its analysis is stored under it.
    const Exec seed = workspace.Run({"show", std::to_string(seed_node), "--prompt"});
    CHECK(seed.code == 0);
    CHECK(seed.out.find("was not made by an LLM call") != std::string::npos);
    CHECK(seed.out.find("(analysis) to openai scripted-model") != std::string::npos);
    CHECK(seed.out.find("You are the performance analyst") != std::string::npos);
    const json seed_document = json::parse(workspace.Run({"show", std::to_string(seed_node), "--json"}).out);
    REQUIRE(seed_document.at("llm_calls").size() == 1);
    CHECK(seed_document.at("llm_calls")[0].at("purpose") == "analysis");
  }

  TEST_CASE("kestrel doctor --config sends each LLM endpoint a tiny request and reports it") {
    SUBCASE("a working endpoint: ok, with its latency") {
      ScriptedServer server({Chat("ok")});
      Workspace workspace;
      const std::string config = WriteConfig(workspace, server);
      const Exec doctor = workspace.Run({"doctor", "--config", config, "--json"});
      const json checks = json::parse(doctor.out);
      bool seen = false;
      for (const auto& check : checks) {
        if (check.at("check") != "llm[0]") continue;
        seen = true;
        CHECK(check.at("state") == "ok");
        const std::string detail = check.at("detail");
        CHECK(detail.find("scripted-model") != std::string::npos);
        CHECK(detail.find("answered in") != std::string::npos);
      }
      CHECK(seen);
      REQUIRE(server.requests() == 1);
      const json request = json::parse(server.seen()[0].body);
      CHECK(request.at("max_tokens") == 16);
    }
    SUBCASE("a named analyst is an endpoint of its own: checked too") {
      ScriptedServer server({Chat("ok"), Chat("ok")});
      Workspace workspace;
      json config = json::parse(testing::ReadFile(WriteConfig(workspace, server)));
      config["analyst"] = {{"provider", "openai"}, {"model", "analyst-model"}, {"base_url", server.BaseUrl()},
                           {"api_key_env", kKeyEnv}};
      const auto path = workspace.path() / "with_analyst.json";
      testing::WriteFile(path, config.dump(2));
      const json checks = json::parse(workspace.Run({"doctor", "--config", path.string(), "--json"}).out);
      bool seen = false;
      for (const auto& check : checks) {
        if (check.at("check") != "analyst") continue;
        seen = true;
        CHECK(check.at("state") == "ok");
        CHECK(check.at("detail").get<std::string>().find("analyst-model") != std::string::npos);
      }
      CHECK(seen);
      CHECK(server.requests() == 2);
    }
    SUBCASE("a rejected key: the check fails, says why, and doctor exits 1") {
      ScriptedServer server({{401, R"({"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}})"}});
      Workspace workspace;
      const std::string config = WriteConfig(workspace, server);
      const Exec doctor = workspace.Run({"doctor", "--config", config});
      CHECK(doctor.code == 1);
      CHECK(doctor.out.find("llm[0]") != std::string::npos);
      CHECK(doctor.out.find("auth") != std::string::npos);
      CHECK(doctor.out.find(kKeyEnv) != std::string::npos);
      CHECK(server.requests() == 1);
    }
  }
}
