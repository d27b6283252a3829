// The analyst and the direction bandit inside real searches (issue 18): a
// loopback stand-in for each wire format (OpenAI, Anthropic), the real
// Engine, MakeMutators and a real SQLite file, and the in-process fake
// evaluator, which profiles nodes (a roofline fraction of speedup / 10). A request is
// answered by what it asks: an analysis, a plan, or code.

#include <doctest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "search/engine_harness.h"
#include "search/llm_search_script.h"
#include "search/mutators/prompt.h"
#include "tests/llm/routed_server.h"

namespace kestrel {
namespace {

using testing::FakeEvaluator;
using testing::Harness;
using testing::Must;
using testing::Reply;
using testing::RoutedServer;

using namespace llm_search;

constexpr char kAnalysisReply[] =
    R"({"bottlenecks": [{"name": "scalar loop", "evidence": "no packed instructions"}],
        "recommendations": [{"change": "REC-ALPHA vectorize the copy", "expected_gain": "2x"},
                            {"change": "REC-BETA unroll by 4", "expected_gain": "1.2x"},
                            {"change": "REC-GAMMA prefetch x", "expected_gain": "5%"}]})";

// A reply in `provider`'s wire format holding `content`.
Reply WireReply(const std::string& provider, const std::string& content) {
  if (provider == "openai") return {200, Reply200(content)};
  return {200, nlohmann::json{{"type", "message"},
                              {"content", {{{"type", "text"}, {"text", content}}}},
                              {"stop_reason", "end_turn"},
                              {"usage", {{"input_tokens", 1000}, {"output_tokens", 200}}}}
                   .dump()};
}

Reply CodeReply(const std::string& provider, const std::string& kind) {
  return WireReply(provider, "Here:\n```cpp\n" + Kernel(kind) + "```\n");
}

bool Asks(const std::string& body, const char* what) { return body.find(what) != std::string::npos; }
bool IsAnalysis(const std::string& body) { return Asks(body, "You are the performance analyst"); }
bool IsPlan(const std::string& body) { return Asks(body, "short numbered plan"); }

// Kernels slower than the seed (V=slowN): the greedy strategy keeps
// expanding the seed, so its children are siblings.
double SlowerThanSeed(const KnobValues& knobs) {
  return knobs.contains("V") ? 0.5 : testing::FakeSpeedup(knobs);
}

RunConfig SiblingsConfig(const RoutedServer& server, const std::string& provider, std::int64_t evaluations) {
  RunConfig config = SearchConfig(server);
  config.strategy.name = "greedy";
  config.mutators[0].provider = provider;
  config.mutators[0].combine_share = 0;
  config.budget.evaluations = evaluations;
  return config;
}

// The content of the messages a request body sent, as one text.
std::string Sent(const std::string& body) {
  const nlohmann::json request = nlohmann::json::parse(body);
  std::string text;
  for (const auto& message : request.at("messages")) {
    if (message.at("content").is_string()) text += message.at("content").get<std::string>();
  }
  return text;
}

// The mutations of the seed's children, by node id.
std::vector<std::string> ChildMutations(Harness& harness) {
  std::vector<std::string> mutations;
  const std::int64_t seed = SeedId(harness);
  for (const EdgeRecord& edge : Must(harness.store().LoadEdges(harness.graph_id()))) {
    if (edge.parent == seed && edge.kind == EdgeKind::kDerive) mutations.push_back(edge.mutation);
  }
  return mutations;
}

TEST_CASE("the analysis of a profiled parent is stored, paid from usd, and its recommendations steer the siblings") {
  for (const std::string provider : {"openai", "anthropic"}) {
    CAPTURE(provider);
    std::atomic<int> made{0};
    RoutedServer server([&](const std::string& body) {
      if (IsAnalysis(body)) return WireReply(provider, kAnalysisReply);
      return CodeReply(provider, "slow" + std::to_string(++made));
    });
    Harness harness;
    FakeEvaluator evaluator(SlowerThanSeed);
    evaluator.EnableProfiles();
    Must(harness.Run(evaluator, SiblingsConfig(server, provider, 4)));
    const std::int64_t seed = SeedId(harness);

    // One analysis, of the seed, stored like any call and counted in usd.
    const auto analyses = Must(harness.store().LlmCallsForNode(seed, "analysis"));
    REQUIRE(analyses.size() == 1);
    CHECK(analyses[0].error.empty());
    CHECK(analyses[0].provider == provider);
    CHECK(analyses[0].cost_usd == doctest::Approx((1000 * 1.0 + 200 * 2.0) / 1e6));
    CHECK(analyses[0].prompt.find("void fake(") != std::string::npos);
    CHECK(Count(harness, "SELECT COUNT(*) FROM llm_calls WHERE purpose = 'analysis'") == 1);
    CHECK(harness.LastRun().llm_usd ==
          doctest::Approx(Count(harness, "SELECT COUNT(*) FROM llm_calls") * (1000 * 1.0 + 200 * 2.0) / 1e6));

    // Siblings follow different recommendations, in rank order.
    CHECK(ChildMutations(harness) == std::vector<std::string>{"llm:test-model:rec 1/3: REC-ALPHA vectorize the copy",
                                                             "llm:test-model:rec 2/3: REC-BETA unroll by 4",
                                                             "llm:test-model:rec 3/3: REC-GAMMA prefetch x"});
    // The analysis came first; each mutation prompt carries its recommendation
    // and where the parent stands.
    const auto bodies = server.bodies();
    REQUIRE(bodies.size() == 4);
    CHECK(IsAnalysis(bodies[0]));
    const auto profile = Must(harness.store().LatestProfile(seed, harness.LastRun().host_id));
    REQUIRE(profile);
    CHECK(Sent(bodies[0]).find(profile->digest) != std::string::npos);
    const char* recommendations[] = {"REC-ALPHA", "REC-BETA", "REC-GAMMA"};
    for (int i = 0; i < 3; ++i) {
      const std::string sent = Sent(bodies[static_cast<std::size_t>(i) + 1]);
      CHECK(sent.find(std::string("): ") + recommendations[i]) != std::string::npos);
      CHECK(sent.find("roofline: 11% of the memory roof reached") != std::string::npos);  // 1.14x / 10
      CHECK(sent.find("Focus on this idea") == std::string::npos);
    }
  }
}

TEST_CASE("a malformed analysis is recorded as such and the bandit chooses the directions") {
  for (const std::string provider : {"openai", "anthropic"}) {
    CAPTURE(provider);
    std::atomic<int> made{0};
    RoutedServer server([&](const std::string& body) {
      if (IsAnalysis(body)) return WireReply(provider, "The loop is memory bound; I would tile it.");
      return CodeReply(provider, "slow" + std::to_string(++made));
    });
    Harness harness;
    FakeEvaluator evaluator(SlowerThanSeed);
    evaluator.EnableProfiles();
    Must(harness.Run(evaluator, SiblingsConfig(server, provider, 4)));
    const auto analyses = Must(harness.store().LlmCallsForNode(SeedId(harness), "analysis"));
    REQUIRE(analyses.size() == 1);  // not asked again for the same node
    CHECK(analyses[0].error.find("malformed analysis: the analysis is not valid JSON") != std::string::npos);
    CHECK(analyses[0].response == "The loop is memory bound; I would tile it.");
    const auto mutations = ChildMutations(harness);
    REQUIRE(mutations.size() == 3);
    const auto& directions = MutationDirections();
    for (const std::string& mutation : mutations) {
      CAPTURE(mutation);
      const std::string direction = mutation.substr(std::string("llm:test-model:").size());
      CHECK(std::find(directions.begin(), directions.end(), direction) != directions.end());
    }
    // Untried directions go first: the siblings' differ.
    CHECK(mutations[0] != mutations[1]);
    CHECK(mutations[1] != mutations[2]);
    CHECK(mutations[0] != mutations[2]);
  }
}

TEST_CASE("expansions of one parent in flight together pay for one analysis") {
  std::atomic<int> made{0};
  RoutedServer server([&](const std::string& body) {
    if (IsAnalysis(body)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the others arrive meanwhile
      return WireReply("openai", kAnalysisReply);
    }
    return CodeReply("openai", "slow" + std::to_string(++made));
  });
  Harness harness;
  FakeEvaluator evaluator(SlowerThanSeed);
  evaluator.EnableProfiles();
  RunConfig config = SiblingsConfig(server, "openai", 7);
  config.parallel.max_in_flight = 4;
  Must(harness.Run(evaluator, config));
  CHECK(Count(harness, "SELECT COUNT(*) FROM llm_calls WHERE purpose = 'analysis'") >= 1);
  CHECK(Count(harness, "SELECT COALESCE(MAX(n), 0) FROM (SELECT COUNT(*) AS n FROM llm_calls "
                       "WHERE purpose = 'analysis' GROUP BY node_id)") == 1);
}

TEST_CASE("a resumed run reuses the stored analysis and goes on with the next recommendation") {
  std::atomic<int> made{0};
  RoutedServer server([&](const std::string& body) {
    if (IsAnalysis(body)) return WireReply("anthropic", kAnalysisReply);
    return CodeReply("anthropic", "slow" + std::to_string(++made));
  });
  Harness harness;
  FakeEvaluator evaluator(SlowerThanSeed);
  evaluator.EnableProfiles();
  Must(harness.Run(evaluator, SiblingsConfig(server, "anthropic", 2)));
  CHECK(ChildMutations(harness).size() == 1);
  const double spent = harness.LastRun().llm_usd;
  CHECK(spent > 0);
  Must(harness.Resume(evaluator, SiblingsConfig(server, "anthropic", 4)));
  CHECK(Count(harness, "SELECT COUNT(*) FROM llm_calls WHERE purpose = 'analysis'") == 1);
  CHECK(ChildMutations(harness) == std::vector<std::string>{"llm:test-model:rec 1/3: REC-ALPHA vectorize the copy",
                                                           "llm:test-model:rec 2/3: REC-BETA unroll by 4",
                                                           "llm:test-model:rec 3/3: REC-GAMMA prefetch x"});
  CHECK(harness.LastRun().llm_usd > spent);
}

TEST_CASE("plan then implement: a plan call and an implementation call carrying it, both stored under the node") {
  std::atomic<int> made{0};
  RoutedServer server([&](const std::string& body) {
    if (IsPlan(body)) return WireReply("openai", "1. PLAN-STEP-ONE split the loop\n2. vectorize");
    return CodeReply("openai", "slow" + std::to_string(++made));
  });
  Harness harness;
  FakeEvaluator evaluator(SlowerThanSeed);
  RunConfig config = SiblingsConfig(server, "openai", 2);
  config.mutators[0].plan = true;
  Must(harness.Run(evaluator, config));
  const auto child = NodeWithKnob(harness, "slow1");
  REQUIRE(child);
  const auto calls = Must(harness.store().LlmCallsForNode(child->id));
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].purpose == "plan");
  CHECK(calls[0].response.find("PLAN-STEP-ONE") != std::string::npos);
  CHECK(calls[1].purpose == "mutate");
  CHECK(calls[1].prompt.find("## Plan to implement\\n1. PLAN-STEP-ONE split the loop") != std::string::npos);
}

TEST_CASE("the bandit learns from the children's results: a direction that always pays is chosen more") {
  // Children made in the direction "vectorize" are 10% faster than the best
  // so far; every other direction's fail to build. Nothing is profiled: no
  // analysis, the bandit chooses.
  std::atomic<int> made{0};
  std::map<std::string, int> asked;
  RoutedServer server([&](const std::string& body) {
    const int n = ++made;
    for (const std::string& direction : MutationDirections()) {
      if (Asks(body, ("Focus on this idea: " + direction + ".").c_str())) ++asked[direction];
    }
    return Asks(body, "Focus on this idea: vectorize.") ? CodeReply("openai", "up" + std::to_string(n))
                                                        : CodeReply("openai", "broken" + std::to_string(n));
  });
  Harness harness;
  FakeEvaluator evaluator(
      [&](const KnobValues& knobs) {
        const auto v = knobs.find("V");
        return v == knobs.end() ? 1.0 : 1.0 + 0.1 * std::stoi(v->second.substr(2));
      },
      [](const KnobValues& knobs) {
        const auto v = knobs.find("V");
        return v != knobs.end() && v->second.starts_with("broken") ? Outcome::kBuildFailed : Outcome::kMeasured;
      });
  RunConfig config = SiblingsConfig(server, "openai", 30);
  config.max_fix_rounds = 0;
  Must(harness.Run(evaluator, config));
  CAPTURE(asked);
  for (const std::string& direction : MutationDirections()) {
    CAPTURE(direction);
    CHECK(asked[direction] >= 1);  // each tried once
    if (direction != "vectorize") CHECK(asked["vectorize"] > 3 * asked[direction]);
  }
  CHECK(asked["vectorize"] >= 15);
}

}  // namespace
}  // namespace kestrel
