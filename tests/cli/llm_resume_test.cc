// Exact resume of an LLM search, on the real binary: a run SIGKILLed several
// times (often while an LLM call is in flight) and resumed each time makes
// the same selections, the same prompts and the same graph as the same run
// left alone. The provider on loopback answers from the prompt alone (a new
// kernel, no code, the parent's own code, a kernel that does not compile or
// is wrong), and from how many times the same prompt was answered before and
// recorded in the run's database (a model asked the same twice answers
// differently, as one sampling at a temperature does; a call lost to a kill
// was never recorded, so asking it again gets the same answer). So any
// difference in what the engine asks shows as a different search; each
// reply waits a little, so that kills land mid-call. A third search asks for
// three versions per call (variants), ranked by the model strategy's code
// model, the others waiting in the mutator's saved state.

#include <doctest.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "cli_workspace.h"
#include "tests/cli/marker_task.h"
#include "testing.h"

using namespace kestrel;
using namespace std::chrono_literals;
using nlohmann::json;
using testing::Exec;
using testing::Process;
using testing::Query;
using testing::Workspace;

namespace {

constexpr char kKeyEnv[] = "KESTREL_LLM_RESUME_TEST_KEY";

// An OpenAI-compatible provider whose reply is a function of the prompt.
class PromptProvider {
 public:
  explicit PromptProvider(const Workspace& workspace) : workspace_(workspace) {
    server_.new_task_queue = [] { return new httplib::ThreadPool(4); };
    server_.Post("/v1/chat/completions", [this](const httplib::Request& request, httplib::Response& response) {
      const std::string prompt = Text(json::parse(request.body).at("messages"));
      std::size_t answered = 0;
      const auto stored = Query(workspace_, "SELECT prompt_json FROM llm_calls");
      for (const auto& row : stored) answered += Text(json::parse(row[0])) == prompt;
      std::this_thread::sleep_for(60ms);
      const std::string reply = Reply(
          prompt, std::hash<std::string>{}(WithoutHardware(prompt) + "#" + std::to_string(answered)), stored.size());
      const json body = {{"choices", {{{"message", {{"role", "assistant"}, {"content", reply}}},
                                       {"finish_reason", "stop"}}}},
                         {"usage", {{"prompt_tokens", 800}, {"completion_tokens", 120}}}};
      response.set_content(body.dump(), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(1ms);
  }
  ~PromptProvider() {
    server_.stop();
    thread_.join();
  }
  std::string BaseUrl() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

 private:
  // The messages' text, as the request and the stored prompt_json hold it.
  static std::string Text(const json& messages) {
    std::string text;
    for (const auto& message : messages) text += message.at("content").get<std::string>() + "\n";
    return text;
  }

  // The prompt without its "## Hardware" section: the replies, and with them
  // the search's path, must not depend on the machine the test runs on (a
  // host whose prompts hashed differently made a search that never reached
  // the ranked versions this test counts).
  static std::string WithoutHardware(const std::string& prompt) {
    const auto start = prompt.find("## Hardware\n");
    if (start == std::string::npos) return prompt;
    const auto next = prompt.find("\n## ", start);
    return prompt.substr(0, start) + (next == std::string::npos ? "" : prompt.substr(next + 1));
  }

  // `stored`: the calls the database holds, a clock a resumed run agrees
  // with (a call killed before it was stored is made again at the same
  // count): every fifth mutation prompt is answered with the parent itself,
  // every fifth with no code and every fifth with a kernel that does not
  // build, so that each search meets duplicates, declines and fix rounds
  // whatever the prompts' text hashes to.
  static std::string Reply(const std::string& prompt, std::size_t hash, std::size_t stored) {
    const auto kernel = [&](const std::string& marker) {
      return "```cpp\n// kestrel:knob U 1 2\n// " + marker + " variant " + std::to_string(hash % 100000) +
             "\n#include <cstdint>\nvoid axpy(const float* x, float* y, int64_t n) {\n"
             "  for (int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;\n}\n```\n";
    };
    switch (stored % 5 == 4 ? 2 : stored % 5 == 1 ? 0 : stored % 5 == 2 ? 3 : hash % 10) {
      case 0: case 1: return "I would unroll the loop by four and use AVX2.";  // no code: a decline
      case 2: {  // the parent unchanged: a duplicate
        const std::string heading = "## Current version (the parent)\n```cpp\n";
        const auto start = prompt.find(heading);
        if (start == std::string::npos) return "No.";
        const auto begin = start + heading.size();
        return "Already optimal:\n```cpp\n" + prompt.substr(begin, prompt.find("```\n", begin) - begin) + "```\n";
      }
      case 3: return kernel("fake:broken");
      case 4: return kernel("fake:wrong");
      default:
        if (prompt.find("Answer with 3 fenced code blocks") != std::string::npos) return Versions(hash);
        return kernel("fake:speed " + std::to_string(10 + hash / 10 % 20).insert(1, "."));
    }
  }

  // A reply to a prompt asking for 3 versions (the llm mutator's variants):
  // three kernels without knobs whose speed follows their unroll constant, so
  // that the ranker of the model strategy has something to learn.
  static std::string Versions(std::size_t hash) {
    std::string reply;
    for (int v = 0; v < 3; ++v) {
      const int unroll = 1 << ((hash / 7 + static_cast<std::size_t>(v) * 3) % 5);
      reply += "```cpp\n// fake:speed " + std::to_string(10 + unroll).insert(1, ".") + "\n// version " +
               std::to_string(hash % 100000) + "-" + std::to_string(v) +
               "\n#include <cstdint>\nconstexpr int kUnroll = " + std::to_string(unroll) +
               ";\nvoid axpy(const float* x, float* y, int64_t n) {\n"
               "  for (int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;\n}\n```\n";
    }
    return reply;
  }

  const Workspace& workspace_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

std::string WriteConfig(Workspace& workspace, const std::string& base_url, const std::string& strategy,
                        bool with_knobs, int variants = 1) {
  ::setenv(kKeyEnv, "sk-resume-test", 1);
  ::setenv("NO_PROXY", "127.0.0.1", 1);
  ::setenv("no_proxy", "127.0.0.1", 1);
  json mutators = json::array();
  mutators.push_back({{"kind", "llm"}, {"provider", "openai"}, {"model", "prompt-model"}, {"base_url", base_url},
                      {"api_key_env", kKeyEnv}, {"timeout_s", 20}, {"max_tokens", 1000}, {"weight", 3},
                      {"variants", variants}});
  if (with_knobs) mutators.push_back({{"kind", "knob"}, {"weight", 1}});
  const json config = {
      {"task", "prop"},
      {"strategy", {{"name", strategy}}},
      {"mutators", mutators},
      {"evaluator", testing::MarkerEvaluator()},
      // The time budget only ends a search that loops (it takes ~20 s).
      {"budget", {{"evaluations", 14}, {"time", "240s"}}},
      {"parallel", {{"max_in_flight", 1}}},
      {"confirm", {{"top", 0}, {"rounds", 0}}},
      {"max_fix_rounds", 1},
      {"seed", 7}};
  const auto path = workspace.path() / "run.json";
  testing::WriteFile(path, config.dump(2));
  return path.string();
}

// What a search did, in order, as the database tells it: every LLM call
// (its prompt, its reply, the node it made), every node (identity, status,
// speedup, expansions), every edge (by identities) and every run event but
// the sessions' own.
std::vector<std::vector<std::string>> Trace(const Workspace& workspace) {
  std::vector<std::vector<std::string>> trace;
  const auto add = [&](const std::string& what, const std::string& sql) {
    for (auto& row : Query(workspace, sql)) {
      row.insert(row.begin(), what);
      trace.push_back(std::move(row));
    }
  };
  add("call", "SELECT c.prompt_json, c.response, coalesce(n.identity, '-') FROM llm_calls c "
              "LEFT JOIN nodes n ON n.id = c.node_id ORDER BY c.id");
  add("node", "SELECT identity, status, coalesce(speedup, '-'), expansions, mutation FROM nodes ORDER BY id");
  add("edge", "SELECT p.identity, c.identity, e.kind, e.mutation FROM edges e JOIN nodes p ON p.id = e.parent_id "
              "JOIN nodes c ON c.id = e.child_id ORDER BY e.id");
  add("event", "SELECT kind, detail_json FROM run_events WHERE kind NOT IN ('start', 'stop', 'resume', 'calibration_failed') "
               "ORDER BY id");
  return trace;
}

// A count over the database; 0 while it cannot be read yet (no schema, a
// session creating it holds the lock).
std::int64_t CountOrZero(const Workspace& workspace, const char* sql) {
  sqlite3* db = nullptr;
  sqlite3_stmt* statement = nullptr;
  std::int64_t count = 0;
  if (sqlite3_open_v2(workspace.db().c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK &&
      sqlite3_prepare_v2(db, sql, -1, &statement, nullptr) == SQLITE_OK && sqlite3_step(statement) == SQLITE_ROW) {
    count = sqlite3_column_int64(statement, 0);
  }
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return count;
}

// The run's results so far (0 while the database has no schema yet: a
// session killed that early).
std::int64_t SearchResults(const Workspace& workspace) {
  return CountOrZero(workspace, "SELECT count(*) FROM measurements WHERE purpose = 'search'");
}

std::optional<Exec> WaitFor(const Process& process, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto done = Workspace::Poll(process)) return done;
    if (std::chrono::steady_clock::now() >= end) return std::nullopt;
    std::this_thread::sleep_for(5ms);
  }
}

}  // namespace

TEST_SUITE("cli resume") {
  TEST_CASE("an LLM search killed with SIGKILL and resumed makes the same selections as one left alone") {
    struct Case {
      std::string strategy;
      bool with_knobs;
      int variants = 1;
    };
    int duplicates = 0, combines = 0, fixes = 0, waited = 0, ranked = 0;  // over the searches
    // The third: three versions per reply, ranked by the model's code
    // features; those not built first wait (saved with the mutator's state).
    for (const Case& c : {Case{"graph-ucb", false}, Case{"model", true}, Case{"model", false, 3}}) {
      CAPTURE(c.strategy);
      CAPTURE(c.variants);
      // The marker task's command evaluator does not calibrate: each database starts as the run makes it.
      Workspace alone(testing::Calibrate::kInRun), killed(testing::Calibrate::kInRun);
      testing::WritePropTask(alone);
      testing::WritePropTask(killed);
      PromptProvider alone_provider(alone), killed_provider(killed);

      const Exec whole = Workspace::Wait(alone.Spawn({"run", WriteConfig(alone, alone_provider.BaseUrl(), c.strategy, c.with_knobs, c.variants),
                                                      "--quiet", "--json"}));
      INFO("uninterrupted: " << whole.err);
      REQUIRE(whole.code == 0);
      const auto expected = Trace(alone);
      // Declines and duplicates happened, and fix rounds: the cases the
      // expansion counts used to lose.
      const auto count = [&](const std::string& what, const std::string& needle) {
        return std::count_if(expected.begin(), expected.end(), [&](const auto& row) {
          return row[0] == what && std::any_of(row.begin() + 1, row.end(), [&](const std::string& column) {
                   return column.find(needle) != std::string::npos;
                 });
        });
      };
      CHECK(count("event", "mutator_declined") > 0);
      fixes += static_cast<int>(count("edge", "fix"));
      duplicates += json::parse(whole.out).at("duplicates").get<int>();
      combines += static_cast<int>(count("node", "combine #"));
      waited += static_cast<int>(count("node", "(version 2 of 3") + count("node", "(version 3 of 3"));
      ranked += static_cast<int>(count("node", "x predicted)"));

      const std::string config = WriteConfig(killed, killed_provider.BaseUrl(), c.strategy, c.with_knobs, c.variants);
      int kills = 0;
      for (int session = 0; session < 10; ++session) {
        const bool started = !Query(killed, "SELECT id FROM runs").empty();
        const Process process = started ? killed.Spawn({"resume", "--run", "1", "--quiet", "--json"})
                                        : killed.Spawn({"run", config, "--quiet", "--json"});
        if (kills < 4) {
          // Kill once the run has 2, 5, 8 and 11 results (so that failures
          // and fixes lie on both sides of a kill), a little later each
          // time: mid-call, mid-build or between.
          std::optional<Exec> ended;
          const auto deadline = std::chrono::steady_clock::now() + 60s;
          while (!(ended = Workspace::Poll(process)) && SearchResults(killed) < 2 + 3 * kills &&
                 std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(5ms);
          }
          if (!ended) ended = WaitFor(process, std::chrono::milliseconds(40 * kills));
          if (!ended) {
            REQUIRE(::kill(process.pid, SIGKILL) == 0);
            CHECK(Workspace::Wait(process).code == 128 + SIGKILL);
            ++kills;
            continue;
          }
          INFO("a session that ended by itself: " << ended->err);
          REQUIRE(ended->code == 0);
          break;
        }
        const Exec done = Workspace::Wait(process);
        INFO("last session: " << done.err);
        REQUIRE(done.code == 0);
        break;
      }
      CHECK(kills >= 3);
      const auto actual = Trace(killed);
      CHECK(actual.size() == expected.size());
      for (std::size_t i = 0; i < std::min(actual.size(), expected.size()); ++i) {
        CAPTURE(i);
        if (actual[i] != expected[i]) {
          for (std::size_t j = 0; j < actual[i].size() && j < expected[i].size(); ++j) {
            if (actual[i][j] != expected[i][j]) {
              MESSAGE("column " << j << "\nresumed:  " << actual[i][j] << "\nexpected: " << expected[i][j]);
            }
          }
        }
        REQUIRE(actual[i] == expected[i]);
      }
    }
    CHECK(duplicates > 0);
    CHECK(fixes > 0);     // fix rounds across a kill
    CHECK(combines > 0);  // LLM combines of two parents resume too
    CHECK(waited > 0);    // versions built after the first of their reply
    CHECK(ranked > 0);    // and versions ranked by the code model
  }
}

namespace {

// A provider for a CPU search whose seed is profiled: an analysis prompt gets
// three recommendations, a mutation prompt a correct axpy that does the work
// four times (slower than the seed, so that greedy keeps expanding the seed)
// and whose code differs by a constant (so that each is timed).
class AnalysingProvider {
 public:
  AnalysingProvider() {
    server_.Post("/v1/chat/completions", [this](const httplib::Request& request, httplib::Response& response) {
      const std::string body = request.body;
      std::string reply;
      if (body.find("You are the performance analyst") != std::string::npos) {
        reply = R"({"bottlenecks": [{"name": "memory", "evidence": "streams x and y"}],
                    "recommendations": [{"change": "REC-ONE", "expected_gain": "1.1x"},
                                        {"change": "REC-TWO", "expected_gain": "1.05x"},
                                        {"change": "REC-THREE", "expected_gain": "1.01x"}]})";
      } else {
        std::this_thread::sleep_for(300ms);  // so that a kill lands mid-call
        reply = "```cpp\n#include <cstdint>\nvoid axpy(const float* x, float* y, int64_t n) {\n"
                "  asm volatile(\"\" :: \"r\"(" + std::to_string(++made_) + "L));\n"
                "  for (int r = 0; r < 4; ++r) {\n    asm volatile(\"\" ::: \"memory\");\n"
                "    for (int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;\n  }\n}\n```\n";
      }
      const json answer = {{"choices", {{{"message", {{"role", "assistant"}, {"content", reply}}},
                                         {"finish_reason", "stop"}}}},
                           {"usage", {{"prompt_tokens", 800}, {"completion_tokens", 120}}}};
      response.set_content(answer.dump(), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(1ms);
  }
  ~AnalysingProvider() {
    server_.stop();
    thread_.join();
  }
  std::string BaseUrl() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> made_{0};
};

}  // namespace

TEST_SUITE("cli resume") {
  TEST_CASE("an analysis call survives SIGKILL: the resumed run reuses it, counts it in usd, follows the next recommendation") {
    Workspace workspace;
    AnalysingProvider provider;
    ::setenv(kKeyEnv, "sk-resume-test", 1);
    ::setenv("NO_PROXY", "127.0.0.1", 1);
    ::setenv("no_proxy", "127.0.0.1", 1);
    const json config = {
        {"task", "affine"},
        {"strategy", {{"name", "greedy"}}},
        {"mutators", {{{"kind", "llm"}, {"provider", "openai"}, {"model", "prompt-model"}, {"base_url", provider.BaseUrl()},
                       {"api_key_env", kKeyEnv}, {"timeout_s", 20}, {"max_tokens", 1000}, {"combine_share", 0},
                       {"price_per_mtok", {{"input", 1.0}, {"output", 2.0}}}}}},
        {"evaluator", {{"min_time", 0.02}, {"min_samples", 3}}},
        {"budget", {{"evaluations", 4}, {"time", "120s"}}},
        {"parallel", {{"max_in_flight", 1}}},
        {"confirm", {{"top", 0}, {"rounds", 0}}},
        {"max_fix_rounds", 0}};
    const auto path = workspace.path() / "analysed.json";
    testing::WriteFile(path, config.dump(2));

    // Killed once the analysis is stored (with the first child), mid-call of
    // the next mutation.
    const Process first = workspace.Spawn({"run", path.string(), "--quiet"});
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    std::optional<Exec> ended;
    while (!(ended = Workspace::Poll(first)) && std::chrono::steady_clock::now() < deadline &&
           (CountOrZero(workspace, "SELECT count(*) FROM llm_calls WHERE purpose = 'analysis'") == 0 ||
            SearchResults(workspace) < 2)) {
      std::this_thread::sleep_for(5ms);
    }
    REQUIRE_FALSE(ended);
    std::this_thread::sleep_for(150ms);
    REQUIRE(::kill(first.pid, SIGKILL) == 0);
    CHECK(Workspace::Wait(first).code == 128 + SIGKILL);
    const auto analyses = Query(workspace, "SELECT node_id, cost_usd FROM llm_calls WHERE purpose = 'analysis'");
    REQUIRE(analyses.size() == 1);
    const std::string seed = analyses[0][0];

    const Exec resumed = workspace.Run({"resume", "--run", "1", "--quiet"});
    INFO("resumed: " << resumed.err);
    REQUIRE(resumed.code == 0);
    // The seed was not analysed again; no node was analysed twice.
    CHECK(Query(workspace, "SELECT id FROM llm_calls WHERE purpose = 'analysis' AND node_id = " + seed).size() == 1);
    CHECK(Query(workspace, "SELECT node_id FROM llm_calls WHERE purpose = 'analysis' GROUP BY node_id "
                           "HAVING count(*) > 1").empty());
    // Its recommendations were followed in rank order across the kill.
    const auto children = Query(workspace, "SELECT mutation FROM edges WHERE kind = 'derive' AND parent_id = " + seed +
                                               " ORDER BY id");
    REQUIRE(children.size() >= 3);
    CHECK(children[0][0] == "llm:prompt-model:rec 1/3: REC-ONE");
    CHECK(children[1][0] == "llm:prompt-model:rec 2/3: REC-TWO");
    CHECK(children[2][0] == "llm:prompt-model:rec 3/3: REC-THREE");
    // The run's spend counts every call, the analysis included.
    const auto spend = Query(workspace, "SELECT (SELECT total(cost_usd) FROM llm_calls WHERE run_id = 1), "
                                        "(SELECT count(*) FROM llm_calls WHERE run_id = 1)");
    const json runs = json::parse(workspace.Run({"runs", "--json"}).out);
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].at("stop_reason") == "evaluations");
    CHECK(std::stod(spend[0][0]) == doctest::Approx(std::stoi(spend[0][1]) * (800 * 1.0 + 120 * 2.0) / 1e6));
    CHECK(std::stod(analyses[0][1]) == doctest::Approx((800 * 1.0 + 120 * 2.0) / 1e6));
  }
}
