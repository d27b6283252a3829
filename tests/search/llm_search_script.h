#pragma once
// The LLM search tests' script: kernels the fake evaluator judges by their
// knob V, OpenAI replies holding them, the config of a search with one LLM
// mutator on a loopback server, and what to look up in the stored graph.

#include <doctest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "search/engine_harness.h"
#include "tests/llm/scripted_server.h"

namespace kestrel::llm_search {

using testing::Harness;
using testing::Must;
using testing::Reply;

inline constexpr char kKeyEnv[] = "KESTREL_LLM_SEARCH_TEST_KEY";
inline constexpr char kKey[] = "sk-search-test-S3CRET-9f8e7d6c5b4a";

// A kernel the fake evaluator judges by its knob V.
inline std::string Kernel(const std::string& kind) {
  return "// kestrel:knob V " + kind +
         "\nvoid fake(const float* x, float* y, long n) {\n  for (long i = 0; i < n; ++i) y[i] = x[i];\n}\n";
}

inline std::string Reply200(const std::string& content, const std::string& finish = "stop") {
  return nlohmann::json{{"choices", {{{"message", {{"role", "assistant"}, {"content", content}}}, {"finish_reason", finish}}}},
                        {"usage", {{"prompt_tokens", 1000}, {"completion_tokens", 200}}}}
      .dump();
}

inline Reply Code(const std::string& kind, const std::string& finish = "stop") {
  return {200, Reply200("Here is a faster version:\n```cpp\n" + Kernel(kind) + "```\n", finish)};
}
inline Reply Unauthorized() {
  return {401, R"({"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}})"};
}
inline Reply QuotaExhausted() {
  return {429, R"({"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}})"};
}

inline double Speedup(const KnobValues& knobs) {
  const auto v = knobs.find("V");
  if (v == knobs.end()) return testing::FakeSpeedup(knobs);
  return v->second == "fast" ? 3.0 : v->second == "fixed" ? 2.5 : 1.2;
}
inline Outcome OutcomeOf(const KnobValues& knobs) {
  const auto v = knobs.find("V");
  if (v == knobs.end()) return Outcome::kMeasured;
  return v->second == "broken" ? Outcome::kBuildFailed : v->second == "wrong" ? Outcome::kWrong : Outcome::kMeasured;
}

template <class Server>
inline MutatorConfig LlmConfig(const Server& server) {
  MutatorConfig config;
  config.kind = "llm";
  config.provider = "openai";
  config.model = "test-model";
  config.base_url = server.BaseUrl();
  config.api_key_env = kKeyEnv;
  config.timeout_s = 5;
  config.max_tokens = 2000;
  config.price_input_per_mtok = 1.0;
  config.price_output_per_mtok = 2.0;
  return config;
}

// One LLM mutator (plus a knob mutator when `with_knob`), one item in flight
// so that the script's replies meet the requests in a known order.
template <class Server>
inline RunConfig SearchConfig(const Server& server, bool with_knob = false) {
  ::setenv(kKeyEnv, kKey, 1);
  ::setenv("NO_PROXY", "127.0.0.1", 1);
  ::setenv("no_proxy", "127.0.0.1", 1);
  RunConfig config = testing::Config();
  config.mutators = {LlmConfig(server)};
  if (with_knob) config.mutators.push_back(MutatorConfig{});
  config.parallel.max_in_flight = 1;
  config.budget.evaluations = 12;
  config.budget.time = Seconds(20);
  return config;
}

inline std::optional<NodeRecord> NodeWithKnob(Harness& harness, const std::string& value) {
  for (const NodeRecord& node : harness.Nodes()) {
    const auto v = node.knobs.find("V");
    if (v != node.knobs.end() && v->second == value) return Must(harness.store().GetNode(node.id));
  }
  return std::nullopt;
}

inline std::optional<EdgeRecord> EdgeInto(Harness& harness, std::int64_t child) {
  for (const EdgeRecord& edge : Must(harness.store().LoadEdges(harness.graph_id()))) {
    if (edge.child == child && edge.kind != EdgeKind::kDuplicate) return edge;
  }
  return std::nullopt;
}

inline std::int64_t SeedId(Harness& harness) {
  for (const NodeRecord& node : harness.Nodes()) {
    if (node.mutation.rfind("seed:", 0) == 0) return node.id;
  }
  FAIL("no seed");
  return 0;
}

// Rows of a SQL count over the database file (a second connection).
inline std::int64_t Count(Harness& harness, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(harness.db_path().c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(statement) == SQLITE_ROW);
  const std::int64_t count = sqlite3_column_int64(statement, 0);
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return count;
}

}  // namespace kestrel::llm_search
