// LLM replies are untrusted input: whatever a model answers becomes a
// recorded outcome, never an abort. The real `kestrel` binary searches a tiny
// task against CorpusProvider (both wire formats) with the fix loop on; the
// command evaluator runs a bash harness that reads markers in the kernel, so
// hundreds of expansions stay cheap. Some seeds are SIGKILLed or interrupted
// at random points and resumed. After each seed: no abort (exit 0 or 130, or
// our SIGKILL), every call stored, every lineage reaches a seed, no identity
// timed twice, integrity_check ok, and each session's counters equal what it
// added to the database.

#include <doctest.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <chrono>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_workspace.h"
#include "testing.h"
#include "tests/cli/corpus_provider.h"
#include "tests/cli/marker_task.h"
#include "tests/llm/routed_server.h"
#include "tests/sqlite_peek.h"
#include "tests/llm/scripted_server.h"

using namespace kestrel;
using nlohmann::json;
using testing::CorpusProvider;
using testing::Exec;
using testing::Process;
using testing::Workspace;
using testing::Number;
using testing::Query;
using testing::WritePropTask;

namespace {

// The marker task's command evaluator does not calibrate: each database
// starts as the run makes it.
constexpr testing::Calibrate kAsRunMakesIt = testing::Calibrate::kInRun;

constexpr char kKeyEnv[] = "KESTREL_LLM_PROPERTY_TEST_KEY";

std::string WriteConfig(Workspace& workspace, const std::string& base_url, const std::string& wire,
                        std::uint64_t seed, int evaluations) {
  ::setenv(kKeyEnv, "sk-property-test", 1);
  ::setenv("NO_PROXY", "127.0.0.1", 1);
  ::setenv("no_proxy", "127.0.0.1", 1);
  const json config = {
      {"task", "prop"},
      {"mutators",
       {{{"kind", "llm"}, {"provider", wire}, {"model", "corpus-model"}, {"base_url", base_url},
         {"api_key_env", kKeyEnv}, {"timeout_s", 20}, {"max_tokens", 1000},
         {"price_per_mtok", {{"input", 1.0}, {"output", 2.0}}}}}},
      {"evaluator", testing::MarkerEvaluator()},
      {"budget", {{"evaluations", evaluations}, {"time", "60s"}}},
      {"parallel", {{"compile_jobs", 2}, {"measure_slots", 1}, {"max_in_flight", 3}}},
      {"confirm", {{"top", 0}, {"rounds", 0}}},
      {"max_fix_rounds", 2},
      {"seed", seed}};
  const auto path = workspace.path() / "run.json";
  testing::WriteFile(path, config.dump(2));
  return path.string();
}

// What the database holds of run 1, to compare with a session's summary.
struct Counts {
  std::int64_t evaluations = 0, duplicates = 0, calls = 0;
  std::map<std::string, std::int64_t> outcomes;
};

Counts CountRun(const Workspace& workspace) {
  Counts counts;
  counts.evaluations = Number(workspace, "SELECT count(*) FROM measurements WHERE run_id = 1 AND purpose = 'search'");
  counts.duplicates = Number(workspace, "SELECT count(*) FROM run_events WHERE run_id = 1 AND kind = 'duplicate'");
  counts.calls = Number(workspace, "SELECT count(*) FROM llm_calls WHERE run_id = 1");
  for (const auto& row : Query(workspace, "SELECT outcome, count(*) FROM measurements WHERE run_id = 1 AND "
                                          "purpose = 'search' GROUP BY outcome")) {
    counts.outcomes[row[0]] = std::stoll(row[1]);
  }
  return counts;
}

// A session that ended by itself: exit 0 or 130, and its summary counts
// exactly what it added to the database.
void CheckSession(const Exec& exec, const Counts& before, const Counts& after) {
  REQUIRE_MESSAGE((exec.code == 0 || exec.code == 130), "exit " << exec.code << ": " << exec.err);
  const json summary = json::parse(exec.out);
  CHECK(summary.at("evaluations").get<std::int64_t>() == after.evaluations - before.evaluations);
  CHECK(summary.at("duplicates").get<std::int64_t>() == after.duplicates - before.duplicates);
  std::int64_t outcomes = 0;
  for (const auto& [outcome, count] : summary.at("outcomes").items()) {
    const auto was = before.outcomes.count(outcome) ? before.outcomes.at(outcome) : 0;
    const auto now = after.outcomes.count(outcome) ? after.outcomes.at(outcome) : 0;
    CHECK_MESSAGE(count.get<std::int64_t>() == now - was, outcome);
    outcomes += count.get<std::int64_t>();
  }
  CHECK(outcomes == after.evaluations - before.evaluations);
  const std::string reason = summary.at("stop_reason");
  CHECK(reason.rfind("error", 0) != 0);
}

// The graph's invariants: no self-edge, each non-seed node has exactly one
// derive/fix parent, and following those parents reaches a seed.
void CheckLineages(const Workspace& workspace) {
  CHECK(Number(workspace, "SELECT count(*) FROM edges WHERE parent_id = child_id") == 0);
  std::map<std::int64_t, std::int64_t> parent;
  std::map<std::int64_t, int> parents;
  for (const auto& row : Query(workspace, "SELECT parent_id, child_id FROM edges WHERE kind IN ('derive', 'fix')")) {
    parent[std::stoll(row[1])] = std::stoll(row[0]);
    ++parents[std::stoll(row[1])];
  }
  std::set<std::int64_t> seeds;
  const auto nodes = Query(workspace, "SELECT id, mutation FROM nodes");
  for (const auto& row : nodes) {
    if (row[1].rfind("seed:", 0) == 0) seeds.insert(std::stoll(row[0]));
  }
  for (const auto& row : nodes) {
    std::int64_t id = std::stoll(row[0]);
    if (!seeds.count(id)) CHECK_MESSAGE(parents[id] == 1, "node " << id);
    std::size_t steps = 0;
    while (!seeds.count(id) && parent.count(id) && steps <= nodes.size()) {
      id = parent[id];
      ++steps;
    }
    CHECK_MESSAGE(seeds.count(id) == 1, "node " << row[0] << " does not reach a seed");
  }
}

// Waits up to `timeout` for the process; nullopt while it runs.
std::optional<Exec> WaitFor(const Process& process, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto done = Workspace::Poll(process)) return done;
    if (std::chrono::steady_clock::now() >= end) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// Waits until `provider` has answered `target` requests in all (then
// `jitter` more) or the session ends; nullopt while it still runs. A minute
// at most: a session that stops asking is left to run to its end.
std::optional<Exec> WaitForRequests(const Process& process, const CorpusProvider& provider, std::int64_t target,
                                    std::chrono::milliseconds jitter) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (provider.requests() < target && std::chrono::steady_clock::now() < end) {
    if (auto done = Workspace::Poll(process)) return done;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return WaitFor(process, jitter);
}

struct SeedResult {
  std::int64_t requests = 0;
  int kills = 0;
};

// One seed: a run, perhaps killed or interrupted at random points and
// resumed until it ends by itself; then the checks.
SeedResult SearchOneSeed(std::uint64_t seed) {
  CAPTURE(seed);
  Workspace workspace(kAsRunMakesIt);
  WritePropTask(workspace);
  CorpusProvider provider(seed);
  const std::string wire = seed % 2 == 0 ? "openai" : "anthropic";
  const std::string config = WriteConfig(workspace, provider.BaseUrl(), wire, seed, 7);
  std::mt19937_64 rng(seed * 7919);
  // Seeds 1, 4, 7...: SIGKILL once or twice; 2, 7, 12...: SIGINT once.
  int kills_left = seed % 3 == 1 ? 1 + static_cast<int>(seed % 2) : 0;
  bool interrupt = seed % 5 == 2;
  bool interrupted = false;
  SeedResult result;
  for (int session = 0; session < 8; ++session) {
    const Counts before = CountRun(workspace);
    // A session killed before it created the run starts it again.
    const bool started = !Query(workspace, "SELECT id FROM runs").empty();
    const Process process = started ? workspace.Spawn({"resume", "--run", "1", "--quiet", "--json"})
                                    : workspace.Spawn({"run", config, "--quiet", "--json"});
    std::optional<Exec> exec;
    if (kills_left > 0 || interrupt) {
      // At a random point of the session's progress, not of the clock: after
      // its k-th LLM request (a seed's run makes about 27 in all) and a few
      // milliseconds more, so that the signal lands mid-call, mid-evaluation
      // or mid-record on a fast machine and a slow one alike.
      const std::int64_t target =
          provider.requests() + std::uniform_int_distribution<int>(1, 12)(rng);
      const auto jitter = std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 60)(rng));
      exec = WaitForRequests(process, provider, target, jitter);
      if (!exec) {
        ::kill(process.pid, kills_left > 0 ? SIGKILL : SIGINT);
        if (kills_left > 0) {
          --kills_left;
          ++result.kills;
          const Exec killed = Workspace::Wait(process);
          CHECK(killed.code == 128 + SIGKILL);
          CHECK(Number(workspace, "SELECT count(*) FROM runs WHERE status = 'failed'") == 0);
          continue;
        }
        interrupt = false;
        interrupted = true;
      }
    }
    if (!exec) exec = Workspace::Wait(process);
    CheckSession(*exec, before, CountRun(workspace));
    if (Query(workspace, "SELECT status FROM runs WHERE id = 1").at(0).at(0) == "finished") break;
  }
  CHECK(Query(workspace, "SELECT status FROM runs WHERE id = 1").at(0).at(0) == "finished");
  // Every call stored: the provider answered what the database holds (a
  // SIGKILL may lose the replies of the calls then in flight, at most 3).
  // A call that SIGINT cancelled is stored with its error ("...cancelled")
  // whether or not the provider had read it yet: counted on both sides.
  result.requests = provider.requests();
  const std::int64_t stored = Number(workspace, "SELECT count(*) FROM llm_calls");
  const std::int64_t cancelled =
      Number(workspace, "SELECT count(*) FROM llm_calls WHERE error LIKE '%cancelled'");
  CAPTURE(stored);
  CAPTURE(cancelled);
  if (!interrupted) CHECK(cancelled == 0);
  if (result.kills == 0) {
    CHECK(stored - cancelled <= result.requests);
    CHECK(stored >= result.requests);
  } else {
    CHECK(stored - cancelled <= result.requests);
    CHECK(stored >= result.requests - 3 * result.kills);
  }
  CheckLineages(workspace);
  // No identity timed twice: one search measurement per node, and the harness
  // timed each (source, knobs) once (a killed session may lose one in flight).
  CHECK(Number(workspace, "SELECT count(*) FROM (SELECT node_id FROM measurements WHERE purpose = 'search' "
                          "GROUP BY node_id HAVING count(*) > 1)") == 0);
  std::map<std::string, int> timed;
  std::istringstream log(testing::ReadFile(workspace.tasks() / "prop" / "timed.log"));
  int repeats = 0;
  for (std::string line; std::getline(log, line);) repeats += ++timed[line] > 1 ? 1 : 0;
  CHECK_MESSAGE(!timed.empty(), "the harness wrote no timed.log: it timed nothing, or could not write it");
  CHECK(repeats <= result.kills * 3);
  CHECK(Query(workspace, "PRAGMA integrity_check").at(0).at(0) == "ok");
  CHECK(Number(workspace, "SELECT count(*) FROM runs WHERE stop_reason LIKE 'error%'") == 0);
  return result;
}

// A provider whose reply is a function of the request alone (FNV-1a of its
// body): a run that makes the same selections in the same state gets the same
// replies, whatever happened to the process in between. About one reply in
// five declines (no code); the others are one of 10 kernels, so the same
// kernel often comes back (a duplicate).
testing::Reply ReplyFor(const std::string& body) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const unsigned char c : body) hash = (hash ^ c) * 0x100000001b3ULL;
  std::string content;
  if (hash % 5 == 0) {
    content = "The loop is already optimal; I have no change to suggest.";
  } else {
    const int variant = static_cast<int>((hash / 5) % 10);
    std::string code = testing::kCorpusSeed;
    code += "// variant " + std::to_string(variant) + " fake:speed " + std::to_string(1.0 + 0.1 * variant).substr(0, 3) +
            "\n";
    content = "```cpp\n" + code + "```\n";
  }
  return {200, json{{"choices", {{{"message", {{"role", "assistant"}, {"content", content}}}, {"finish_reason", "stop"}}}},
                    {"usage", {{"prompt_tokens", 10}, {"completion_tokens", 10}}}}
                   .dump()};
}

// What a run chose, in order: the nodes, the edges, the LLM exchanges (each
// prompt holds its parent), the declines and duplicates, each node's expansions.
std::vector<std::vector<std::string>> Choices(const Workspace& workspace) {
  std::vector<std::vector<std::string>> rows;
  for (const char* sql : {"SELECT id, identity, expansions FROM nodes ORDER BY id",
                          "SELECT parent_id, child_id, kind FROM edges ORDER BY id",
                          "SELECT node_id, prompt_json, response FROM llm_calls ORDER BY id",
                          "SELECT kind, detail_json FROM run_events WHERE kind IN ('duplicate', 'mutator_declined') "
                          "ORDER BY id"}) {
    for (auto& row : Query(workspace, sql)) rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

TEST_SUITE("cli") {
  TEST_CASE("any reply a model gives becomes a recorded outcome: 20 seeds, both wire formats, kills and resumes") {
    const auto start = std::chrono::steady_clock::now();
    std::int64_t expansions = 0;
    int kills = 0;
    constexpr std::uint64_t kSeeds = 20;
    for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
      const SeedResult result = SearchOneSeed(seed);
      expansions += result.requests;
      kills += result.kills;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    MESSAGE(kSeeds << " seeds, " << expansions << " expansions (LLM requests), " << kills << " SIGKILLs, "
                   << seconds << " s");
    CHECK(expansions >= 500);
    CHECK(kills >= 5);
  }

  TEST_CASE("a provider that always repeats the parent or one kernel: the run ends by itself, duplicates counted") {
    for (const bool same_kernel : {false, true}) {
      CAPTURE(same_kernel);
      Workspace workspace(kAsRunMakesIt);
      WritePropTask(workspace);
      // Replies: always the parent unchanged, or always one faster kernel.
      testing::ScriptedServer server({{200, json{{"choices", {{{"message", {{"role", "assistant"},
          {"content", same_kernel ? "```cpp\n// fake:speed 1.31\n#include <cstdint>\nvoid axpy(const float* x, float* y, "
                                    "int64_t n) {\n  for (int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;\n}\n```\n"
                                  : std::string("```cpp\n") + testing::kCorpusSeed + "```\n"}}}, {"finish_reason", "stop"}}}},
          {"usage", {{"prompt_tokens", 10}, {"completion_tokens", 10}}}}.dump()}});
      const Exec run =
          workspace.Run({"run", WriteConfig(workspace, server.BaseUrl(), "openai", 1, 50), "--quiet", "--json"});
      REQUIRE_MESSAGE(run.code == 0, run.err);
      const json summary = json::parse(run.out);
      CHECK(summary.at("stop_reason") == "exhausted");
      CHECK(summary.at("duplicates").get<std::int64_t>() >= 3);
      CHECK(summary.at("duplicates").get<std::int64_t>() == CountRun(workspace).duplicates);
      CHECK(summary.at("evaluations").get<std::int64_t>() == (same_kernel ? 2 : 1));
      CHECK(Number(workspace, "SELECT count(*) FROM edges WHERE parent_id = child_id") == 0);
      CHECK(Number(workspace, "SELECT count(*) FROM llm_calls") == static_cast<std::int64_t>(server.requests()));
      CheckLineages(workspace);
      // And it can be resumed (extended) without meeting anything broken.
      const Exec resumed = workspace.Run({"resume", "--run", "1", "--max-evals", "2", "--quiet", "--json"});
      CHECK_MESSAGE(resumed.code == 0, resumed.err);
    }
  }

  TEST_CASE("a broken invariant stops the run with stop reason error, saved; resume says why and refuses") {
    Workspace workspace(kAsRunMakesIt);
    WritePropTask(workspace);
    CorpusProvider provider(3);
    const Exec run = workspace.Run({"run", WriteConfig(workspace, provider.BaseUrl(), "openai", 3, 4), "--quiet", "--json"});
    REQUIRE_MESSAGE(run.code == 0, run.err);
    // Corrupt the graph: the seed gets a derive parent among its own
    // descendants, so following first parents goes round a cycle.
    const std::string child =
        Query(workspace, "SELECT child_id FROM edges WHERE kind = 'derive' ORDER BY id LIMIT 1").at(0).at(0);
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(workspace.db().c_str(), &db) == SQLITE_OK);
    const std::string sql = "INSERT INTO edges (parent_id, child_id, kind, run_id, mutation, created_at) VALUES (" +
                            child + ", 1, 'derive', 1, 'corrupt', 0)";
    REQUIRE(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);

    const Exec failed = workspace.Run({"resume", "--run", "1", "--max-evals", "4", "--quiet"});
    CHECK(failed.code == 1);  // not an abort (134)
    CHECK(failed.err.find("first parents form a cycle") != std::string::npos);
    const auto rows = Query(workspace, "SELECT status, stop_reason, state_json FROM runs WHERE id = 1");
    CHECK(rows.at(0).at(0) == "failed");
    CHECK(rows.at(0).at(1).rfind("error: internal error at ", 0) == 0);
    CHECK(rows.at(0).at(1).find("check 'path.size() <= vertex_count' failed") != std::string::npos);
    CHECK(json::parse(rows.at(0).at(2)).contains("selections"));
    CHECK(Query(workspace, "PRAGMA integrity_check").at(0).at(0) == "ok");

    const std::int64_t events = Number(workspace, "SELECT count(*) FROM run_events");
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"resume", "--quiet"}, std::vector<std::string>{"resume", "--run", "1", "--quiet"}}) {
      const Exec refused = workspace.Run(args);
      CHECK(refused.code == 1);
      CHECK(refused.err.find("run 1 stopped with an error and is not resumed") != std::string::npos);
      CHECK(refused.err.find("first parents form a cycle") != std::string::npos);
      CHECK(refused.err.find("--retry") != std::string::npos);
    }
    CHECK(Number(workspace, "SELECT count(*) FROM run_events") == events);  // nothing started
    // --retry goes back in (and meets the same corrupt graph: stopped again, not aborted).
    const Exec retried = workspace.Run({"resume", "--run", "1", "--retry", "--max-evals", "4", "--quiet"});
    CHECK(retried.code == 1);
    CHECK(retried.err.find("first parents form a cycle") != std::string::npos);
  }
  TEST_CASE("a run SIGKILLed twice and resumed makes the selections of an uninterrupted run, declines and duplicates included") {
    // One candidate in flight and replies that depend only on the request:
    // the run is deterministic, so any difference is state a kill lost (such
    // as expansions counted at selection but rebuilt otherwise on load).
    const auto config_for = [](Workspace& workspace, const std::string& base_url) {
      json config = json::parse(testing::ReadFile(WriteConfig(workspace, base_url, "openai", 5, 12)));
      config["strategy"] = {{"name", "graph-ucb"}};
      config["parallel"] = {{"compile_jobs", 1}, {"measure_slots", 1}, {"max_in_flight", 1}};
      config["max_fix_rounds"] = 0;
      config["budget"] = {{"evaluations", 12}, {"time", "300s"}};
      const auto path = workspace.path() / "run.json";
      testing::WriteFile(path, config.dump(2));
      return path.string();
    };
    testing::RoutedServer server(ReplyFor);
    Workspace whole(kAsRunMakesIt);
    WritePropTask(whole);
    const Exec uninterrupted = whole.Run({"run", config_for(whole, server.BaseUrl()), "--quiet", "--json"});
    REQUIRE_MESSAGE(uninterrupted.code == 0, uninterrupted.err);
    const auto expected = Choices(whole);
    CHECK(Number(whole, "SELECT count(*) FROM run_events WHERE kind = 'duplicate'") >= 1);
    CHECK(Number(whole, "SELECT count(*) FROM run_events WHERE kind = 'mutator_declined'") >= 1);

    Workspace split(kAsRunMakesIt);
    WritePropTask(split);
    const std::string config = config_for(split, server.BaseUrl());
    int kills = 0;
    // Killed once 3 results are stored and once 7 are, wherever it is then
    // (an LLM call in flight, a build, a transaction), then resumed to the end.
    for (const std::int64_t kill_after : {3, 7}) {
      const bool started = !Query(split, "SELECT id FROM runs").empty();
      const Process process = started ? split.Spawn({"resume", "--run", "1", "--quiet", "--json"})
                                      : split.Spawn({"run", config, "--quiet", "--json"});
      std::optional<Exec> ended;
      // (QueryInt is -1 while the file is being created.)
      while (!(ended = Workspace::Poll(process)) &&
             testing::QueryInt(split.db(), "SELECT count(*) FROM measurements WHERE purpose = 'search'") < kill_after) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      REQUIRE_FALSE_MESSAGE(ended.has_value(), "the run ended before it was killed");
      ::kill(process.pid, SIGKILL);
      CHECK(Workspace::Wait(process).code == 128 + SIGKILL);
      ++kills;
    }
    const Exec resumed = split.Run({"resume", "--run", "1", "--quiet", "--json"});
    REQUIRE_MESSAGE(resumed.code == 0, resumed.err);
    CHECK(kills == 2);
    CHECK(Query(split, "SELECT status FROM runs WHERE id = 1").at(0).at(0) == "finished");
    const auto got = Choices(split);
    CHECK(got.size() == expected.size());
    for (std::size_t i = 0; i < std::min(got.size(), expected.size()); ++i) {
      CHECK_MESSAGE(got[i] == expected[i], "row " << i << ": " << got[i].at(0) << " | " << got[i].at(1).substr(0, 60)
                                                  << " vs " << expected[i].at(0) << " | "
                                                  << expected[i].at(1).substr(0, 60));
    }
  }

}
