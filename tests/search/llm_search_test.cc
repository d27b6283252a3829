// The LLM mutator inside real searches: a scripted OpenAI-compatible server on
// loopback, the real Engine, MakeMutators and a real SQLite file, and the
// in-process fake evaluator. LLM-written kernels declare a knob V whose value
// tells the fake what they are: fast, fixed, broken (does not compile), wrong.

#include <doctest.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "search/engine_harness.h"
#include "search/llm_search_script.h"
#include "search/mutators/llm_mutator.h"
#include "tests/llm/routed_server.h"
#include "tests/llm/scripted_server.h"

namespace kestrel {
namespace {

using testing::FakeEvaluator;
using testing::Harness;
using testing::Must;
using testing::Reply;
using testing::RoutedServer;
using testing::ScriptedServer;

using namespace llm_search;

std::string FileBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_CASE("a faster kernel from the LLM is found and recorded with its lineage and its call") {
  ScriptedServer server({Code("fast"), Unauthorized()});
  Harness harness;
  FakeEvaluator evaluator(Speedup, OutcomeOf);
  const RunSummary summary = Must(harness.Run(evaluator, SearchConfig(server)));
  CHECK(summary.stop_reason == StopKind::kExhausted);
  CHECK(summary.best_speedup == doctest::Approx(3.0));
  const auto fast = NodeWithKnob(harness, "fast");
  REQUIRE(fast);
  CHECK(summary.best_node == fast->id);
  CHECK(fast->mutation.rfind("llm:test-model:", 0) == 0);
  CHECK(fast->source == Kernel("fast"));
  const auto edge = EdgeInto(harness, fast->id);
  REQUIRE(edge);
  CHECK(edge->parent == SeedId(harness));
  CHECK(edge->kind == EdgeKind::kDerive);
  const auto calls = Must(harness.store().LlmCallsForNode(fast->id));
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].model == "test-model");
  CHECK(calls[0].provider == "openai");
  CHECK(calls[0].run_id == harness.last_run());
  CHECK(calls[0].http_status == 200);
  CHECK(calls[0].input_tokens == 1000);
  CHECK(calls[0].output_tokens == 200);
  CHECK(calls[0].cost_usd == doctest::Approx((1000 * 1.0 + 200 * 2.0) / 1e6));
  CHECK(calls[0].error.empty());
  CHECK(calls[0].response.find("// kestrel:knob V fast") != std::string::npos);
  CHECK(calls[0].prompt.find("void fake(") != std::string::npos);  // the prompt as sent
  // The prompt carried the parent and one direction.
  const auto seen = server.seen();
  REQUIRE(seen.size() >= 1);
  CHECK(seen[0].authorization == std::string("Bearer ") + kKey);
  CHECK(seen[0].body.find("Focus on this idea:") != std::string::npos);
  // The 401 was stored too, and stopped the mutator: no request after it.
  CHECK(seen.size() == 2);
  CHECK(Count(harness, "SELECT COUNT(*) FROM llm_calls WHERE http_status = 401") == 1);
  CHECK(Count(harness, "SELECT COUNT(*) FROM run_events WHERE kind = 'mutator_stopped'") == 1);
}

TEST_CASE("with combine_share 1 an LLM-made parent is combined with a measured node of another source, both named") {
  // The first expansion (of the seed, alone) makes V=fast; expanding it, the
  // seed is the only other measured source: a combine of the two.
  ScriptedServer server({Code("fast"), Code("fixed"), Unauthorized()});
  Harness harness;
  FakeEvaluator evaluator(Speedup, OutcomeOf);
  RunConfig config = SearchConfig(server);
  config.mutators[0].combine_share = 1.0;
  Must(harness.Run(evaluator, config));
  const auto fast = NodeWithKnob(harness, "fast");
  const auto combined = NodeWithKnob(harness, "fixed");
  REQUIRE(fast);
  REQUIRE(combined);
  const std::int64_t seed = SeedId(harness);
  const auto edge = EdgeInto(harness, combined->id);
  REQUIRE(edge);
  CHECK(edge->kind == EdgeKind::kDerive);
  const std::string parent = std::to_string(edge->parent);
  const std::string partner = std::to_string(edge->parent == fast->id ? seed : fast->id);
  CHECK(edge->mutation == "combine #" + parent + " + #" + partner + ": llm:test-model");
  CHECK(combined->mutation == edge->mutation);
  // One request held both codes, each named by its node.
  const auto seen = server.seen();
  REQUIRE(seen.size() >= 2);
  const std::string& body = seen[1].body;
  CHECK(body.find("Combine versions #" + parent + " and #" + partner) != std::string::npos);
  CHECK(body.find("## Version #" + std::to_string(fast->id)) != std::string::npos);
  CHECK(body.find("## Version #" + std::to_string(seed)) != std::string::npos);
  CHECK(body.find("// kestrel:knob V fast") != std::string::npos);
  CHECK(body.find(nlohmann::json(Must(harness.store().GetNode(seed)).source).dump().substr(1, 40)) != std::string::npos);
  CHECK(body.find("3.00x speedup over the reference") != std::string::npos);
  // The seed alone had no partner: its expansion was an ordinary mutation.
  CHECK(fast->mutation.rfind("llm:test-model:", 0) == 0);
}

bool IsFix(const std::string& body) { return body.find("Outcome: ") != std::string::npos; }

// Expansions get `first`, then replies without code (declined, the search goes
// on) until the fourth, then a 401; fixes get `fix(n)` for the n-th fix.
std::function<Reply(const std::string&)> Route(std::string first, std::function<Reply(int)> fix) {
  return [first, fix, expansions = 0, fixes = 0](const std::string& body) mutable -> Reply {
    if (IsFix(body)) return fix(++fixes);
    ++expansions;
    if (expansions == 1) return Code(first);
    if (expansions < 5) return {200, Reply200("Nothing to add.")};
    return Unauthorized();
  };
}

TEST_CASE("a kernel that fails to compile is fixed through a fix edge; both calls are stored") {
  RoutedServer server(Route("broken", [](int) { return Code("fixed"); }));
  Harness harness;
  FakeEvaluator evaluator(Speedup, OutcomeOf);
  const RunSummary summary = Must(harness.Run(evaluator, SearchConfig(server)));
  CHECK(summary.stop_reason == StopKind::kExhausted);
  const auto broken = NodeWithKnob(harness, "broken");
  const auto fixed = NodeWithKnob(harness, "fixed");
  REQUIRE(broken);
  REQUIRE(fixed);
  CHECK(broken->status == NodeStatus::kBuildFailed);
  CHECK(fixed->status == NodeStatus::kMeasured);
  CHECK(summary.best_speedup == doctest::Approx(2.5));
  CHECK(EdgeInto(harness, broken->id)->kind == EdgeKind::kDerive);
  const auto fix_edge = EdgeInto(harness, fixed->id);
  REQUIRE(fix_edge);
  CHECK(fix_edge->kind == EdgeKind::kFix);
  CHECK(fix_edge->parent == broken->id);
  CHECK(fixed->mutation == "llm:test-model:fix build_failed");
  CHECK(Must(harness.store().LlmCallsForNode(broken->id)).size() == 1);
  CHECK(Must(harness.store().LlmCallsForNode(fixed->id)).size() == 1);
  // One fix prompt, carrying the failing source and the compiler's log.
  int fix_prompts = 0;
  for (const std::string& body : server.bodies()) {
    if (!IsFix(body)) continue;
    ++fix_prompts;
    CHECK(body.find("Outcome: build_failed") != std::string::npos);
    CHECK(body.find("the fake compiler refuses") != std::string::npos);
    CHECK(body.find("kestrel:knob V broken") != std::string::npos);
  }
  CHECK(fix_prompts == 1);
}

TEST_CASE("a wrong kernel is recorded as wrong and a fix is asked for, at most max_fix_rounds times") {
  RoutedServer server(Route("wrong", [](int n) { return Code("wrong" + std::to_string(n)); }));
  Harness harness;
  FakeEvaluator evaluator(Speedup, [](const KnobValues& knobs) {
    return knobs.count("V") ? Outcome::kWrong : Outcome::kMeasured;
  });
  RunConfig config = SearchConfig(server);
  config.max_fix_rounds = 2;
  const RunSummary summary = Must(harness.Run(evaluator, config));
  CHECK(summary.stop_reason == StopKind::kExhausted);
  CHECK(summary.outcomes.at("wrong") == 3);  // the first and two fixes
  const auto wrong = NodeWithKnob(harness, "wrong");
  REQUIRE(wrong);
  CHECK(wrong->status == NodeStatus::kWrong);
  CHECK(NodeWithKnob(harness, "wrong1"));
  CHECK(NodeWithKnob(harness, "wrong2"));
  int fix_prompts = 0;
  for (const std::string& body : server.bodies()) {
    if (!IsFix(body)) continue;
    ++fix_prompts;
    CHECK(body.find("Outcome: wrong") != std::string::npos);
    CHECK(body.find("1 of 1 input sets differ") != std::string::npos);
  }
  CHECK(fix_prompts == 2);
  CHECK(Count(harness, "SELECT COUNT(*) FROM edges WHERE kind = 'fix'") == 2);
}

TEST_CASE("a reply without code is declined with its call stored, and the search goes on") {
  ScriptedServer server({{200, Reply200("I would vectorize the loop, but I will not show code.")}, Code("fast"),
                         Unauthorized()});
  Harness harness;
  FakeEvaluator evaluator(Speedup, OutcomeOf);
  const RunSummary summary = Must(harness.Run(evaluator, SearchConfig(server)));
  CHECK(summary.best_speedup == doctest::Approx(3.0));
  CHECK(Count(harness, "SELECT COUNT(*) FROM llm_calls") == 3);
  CHECK(Count(harness, "SELECT COUNT(*) FROM llm_calls WHERE node_id IS NULL AND error LIKE 'no usable code%'") == 1);
  CHECK(Count(harness, "SELECT COUNT(*) FROM run_events WHERE kind = 'mutator_declined'") >= 1);
}

TEST_CASE("a reply cut at the token limit is not compiled") {
  ScriptedServer server({Code("fast", "length"), Unauthorized()});
  Harness harness;
  FakeEvaluator evaluator(Speedup, OutcomeOf);
  const RunSummary summary = Must(harness.Run(evaluator, SearchConfig(server)));
  CHECK_FALSE(NodeWithKnob(harness, "fast"));
  CHECK(summary.evaluations == 1);  // the seed only
  CHECK(Count(harness, "SELECT COUNT(*) FROM llm_calls WHERE error LIKE '%token limit%' AND node_id IS NULL") == 1);
}

TEST_CASE("a 401 stops the LLM mutator; the knob mutator's work goes on and the run finishes") {
  ScriptedServer server({Unauthorized()});
  Harness harness;
  FakeEvaluator evaluator(Speedup, OutcomeOf);
  std::ostringstream progress;
  const RunSummary summary = Must(harness.Run(evaluator, SearchConfig(server, true), &progress));
  CHECK(summary.stop_reason == StopKind::kEvaluations);
  CHECK(summary.evaluations == 12);
  CHECK(server.requests() == 1);
  CHECK(harness.LastRun().status == RunStatus::kFinished);
  CHECK(progress.str().find("auth") != std::string::npos);
  CHECK(Count(harness, "SELECT COUNT(*) FROM llm_calls WHERE http_status = 401") == 1);
}

TEST_CASE("an exhausted quota stops the LLM mutator") {
  ScriptedServer server({QuotaExhausted()});
  Harness harness;
  FakeEvaluator evaluator(Speedup, OutcomeOf);
  const RunSummary summary = Must(harness.Run(evaluator, SearchConfig(server)));
  CHECK(summary.stop_reason == StopKind::kExhausted);
  CHECK(server.requests() == 1);
  CHECK(Count(harness, "SELECT COUNT(*) FROM llm_calls WHERE http_status = 429 AND error != ''") == 1);
  CHECK(Count(harness, "SELECT COUNT(*) FROM run_events WHERE kind = 'mutator_stopped' AND detail_json LIKE '%quota%'") == 1);
}

TEST_CASE("no call is made that could exceed the usd budget, and the run stops with 'usd'") {
  ScriptedServer server({Code("fast")});
  Harness harness;
  FakeEvaluator evaluator(Speedup, OutcomeOf);
  RunConfig config = SearchConfig(server, true);
  config.budget.usd = 0.001;  // one call may cost up to 2000 tokens * $2/Mtok = $0.004
  const RunSummary summary = Must(harness.Run(evaluator, config));
  CHECK(server.requests() == 0);
  CHECK(summary.stop_reason == StopKind::kUsd);
  CHECK(harness.LastRun().stop_reason == "usd");
}

TEST_CASE("a resumed run counts the usd its earlier sessions spent") {
  // Each call costs $0.0014 (1000 in, 200 out) and first reserves about
  // $0.0045 (its worst case). The first run's calls use the $0.009 budget up;
  // a resumed run that did not count them would make as many again and end
  // past the budget.
  std::vector<Reply> replies;
  for (int i = 0; i < 8; ++i) replies.push_back(Code("v" + std::to_string(i)));
  ScriptedServer server(replies);
  Harness harness;
  FakeEvaluator evaluator(Speedup, OutcomeOf);
  RunConfig config = SearchConfig(server);
  config.budget.usd = 0.009;
  const RunSummary first = Must(harness.Run(evaluator, config));
  CHECK(first.stop_reason == StopKind::kUsd);
  const double spent = harness.LastRun().llm_usd;
  CHECK(spent > 0.0);
  const RunSummary resumed = Must(harness.Resume(evaluator, config));
  CHECK(resumed.stop_reason == StopKind::kUsd);
  const double total = harness.LastRun().llm_usd;
  CHECK(total <= 0.009 + 1e-12);
  CHECK(total + 1e-12 >= spent);
}

TEST_CASE("the end of the time budget cancels an LLM call in flight; the call is stored") {
  ScriptedServer server({Reply(200, Reply200("too late"), {}, 6.0)});
  Harness harness;
  FakeEvaluator evaluator(Speedup, OutcomeOf);
  RunConfig config = SearchConfig(server);
  config.budget.time = Seconds(1.5);
  const auto start = std::chrono::steady_clock::now();
  const RunSummary summary = Must(harness.Run(evaluator, config));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(summary.stop_reason == StopKind::kTime);
  CHECK(seconds < 5.0);  // not the 6 s the reply takes
  CHECK(server.requests() == 1);
  CHECK(Count(harness, "SELECT COUNT(*) FROM llm_calls WHERE error LIKE '%cancelled%'") == 1);
}

TEST_CASE("the API key appears nowhere in the database file") {
  ScriptedServer server({{200, Reply200("no code")}, Code("broken"), Code("fixed"), Code("fast"), Unauthorized()});
  Harness harness;
  FakeEvaluator evaluator(Speedup, OutcomeOf);
  (void)Must(harness.Run(evaluator, SearchConfig(server)));
  REQUIRE(server.requests() >= 3);
  CHECK(server.seen()[0].authorization == std::string("Bearer ") + kKey);
  for (const char* suffix : {"", "-wal", "-shm"}) {
    const std::string bytes = FileBytes(harness.db_path().string() + suffix);
    CAPTURE(suffix);
    CHECK(bytes.find(kKey) == std::string::npos);
    CHECK(bytes.find("S3CRET") == std::string::npos);
  }
  CHECK(Count(harness, "SELECT COUNT(*) FROM llm_calls") >= 3);
}

TEST_CASE("two models with weights in one run: each expansion's model is recorded with its node and call") {
  // Each reply is a new kernel named after the model that wrote it; after
  // eight replies the server refuses (401), which stops that mutator.
  RoutedServer server([calls = std::map<std::string, int>()](const std::string& body) mutable -> Reply {
    const std::string model = nlohmann::json::parse(body).at("model").get<std::string>();
    const int n = ++calls[model];
    if (n > 8) return Unauthorized();
    return Code(model + "-" + std::to_string(n));
  });
  Harness harness;
  FakeEvaluator evaluator(Speedup, OutcomeOf);
  RunConfig config = SearchConfig(server);
  MutatorConfig cheap = LlmConfig(server);
  cheap.model = "cheap-fast";
  cheap.weight = 2.0;
  MutatorConfig strong = LlmConfig(server);
  strong.model = "strong-slow";
  strong.weight = 1.0;
  config.mutators = {cheap, strong};
  config.budget.evaluations = 10;
  (void)Must(harness.Run(evaluator, config));

  const std::int64_t by_cheap = Count(harness, "SELECT COUNT(*) FROM llm_calls WHERE model = 'cheap-fast'");
  const std::int64_t by_strong = Count(harness, "SELECT COUNT(*) FROM llm_calls WHERE model = 'strong-slow'");
  CHECK(by_cheap >= 1);
  CHECK(by_strong >= 1);
  CHECK(Count(harness, "SELECT COUNT(*) FROM llm_calls WHERE model NOT IN ('cheap-fast', 'strong-slow')") == 0);
  // Every LLM node names its model in its mutation and was written by that model's call.
  int llm_nodes = 0;
  for (const NodeRecord& node : harness.Nodes()) {
    if (node.mutation.rfind("llm:", 0) != 0) continue;
    ++llm_nodes;
    const auto calls = Must(harness.store().LlmCallsForNode(node.id));
    REQUIRE(calls.size() == 1);
    CAPTURE(node.mutation);
    CHECK(node.mutation.rfind("llm:" + calls[0].model + ":", 0) == 0);
    CHECK(node.knobs.at("V").rfind(calls[0].model + "-", 0) == 0);
  }
  CHECK(llm_nodes >= 2);
}

TEST_CASE("a missing API key is refused by MakeMutators, naming the variable") {
  ScriptedServer server({Code("fast")});
  RunConfig config = SearchConfig(server);
  config.mutators[0].api_key_env = "KESTREL_LLM_SEARCH_TEST_UNSET_KEY";
  ::unsetenv("KESTREL_LLM_SEARCH_TEST_UNSET_KEY");
  const Task task = testing::MakeFakeTask();
  auto mutators = MakeMutators(config, task, HostInfo{}, std::make_shared<Budget>(config.budget));
  REQUIRE_FALSE(mutators.has_value());
  CHECK(mutators.error().message().find("KESTREL_LLM_SEARCH_TEST_UNSET_KEY") != std::string::npos);
}

TEST_CASE("the example LLM run configs load and make their mutators") {
  const char* source_dir = std::getenv("KESTREL_SOURCE_DIR");
  REQUIRE(source_dir != nullptr);
  ::setenv("OPENAI_API_KEY", "sk-dummy", 1);
  ::setenv("ANTHROPIC_API_KEY", "sk-ant-dummy", 1);
  const Task task = testing::MakeFakeTask();
  for (const char* name : {"openai.json", "anthropic.json", "local.json"}) {
    CAPTURE(name);
    auto config = LoadRunConfig(std::filesystem::path(source_dir) / "configs" / "runs" / name);
    REQUIRE_MESSAGE(config.has_value(), testing::ErrorOf(config));
    CHECK(Validate(*config, name).has_value());
    auto mutators = MakeMutators(*config, task, HostInfo{}, std::make_shared<Budget>(config->budget));
    REQUIRE_MESSAGE(mutators.has_value(), testing::ErrorOf(mutators));
    REQUIRE(mutators->size() == 2);
    CHECK((*mutators)[1]->Kind() == "llm");
  }
}

}  // namespace
}  // namespace kestrel
