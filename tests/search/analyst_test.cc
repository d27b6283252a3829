// The LLM mutator with an analyst, called directly with a profiled parent
// (search/mutators/analyst.h): one analysis per node however many
// expansions ask at once, its recommendations followed in rank order, a
// stored analysis reused without a call, and a budget that cannot hold the
// analysis declines the expansion.

#include <doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "search/engine/budget.h"
#include "search/llm_search_script.h"
#include "search/mutators/analyst.h"
#include "search/mutators/llm_mutator.h"
#include "tests/llm/routed_server.h"

namespace kestrel {
namespace {

using testing::RoutedServer;
using namespace llm_search;

constexpr char kAnalysis[] =
    R"({"bottlenecks": [], "recommendations": [{"change": "FIRST idea", "expected_gain": "2x"},
                                               {"change": "SECOND idea", "expected_gain": "1.1x"}]})";

struct Setup {
  explicit Setup(RoutedServer& server, std::optional<double> usd = std::nullopt) {
    config = SearchConfig(server);
    config.mutators[0].combine_share = 0;
    config.budget.usd = usd;
    budget = std::make_shared<Budget>(config.budget);
    mutators = Must(MakeMutators(config, task, HostInfo{}, budget));
  }
  RunConfig config;
  Task task = testing::MakeFakeTask();
  std::shared_ptr<Budget> budget;
  std::vector<std::unique_ptr<Mutator>> mutators;
};

ParentView Profiled(NodeId id) {
  ParentView parent{id, {testing::kFakeSeed, {{"A", "1"}, {"B", "1"}, {"C", "0"}}, "fake-cc", {"-O2"}}};
  parent.profile_digest = "roofline: 30% of L2 bandwidth (memory bound)";
  parent.roofline_fraction = 0.3;
  parent.bound = "memory";
  return parent;
}

MutationResult Expand(Mutator& mutator, const ParentView& parent, std::uint64_t seed = 1) {
  std::mt19937_64 rng(seed);
  return mutator.Expand(parent, rng, [](const std::string&) { return false; });
}

int Analyses(const MutationResult& result) {
  int count = 0;
  for (const LlmCallRecord& call : result.calls) count += call.purpose == "analysis";
  return count;
}

TEST_CASE("expansions of one parent at once pay for one analysis, stored under the parent; siblings differ") {
  std::atomic<int> analyses{0}, made{0};
  RoutedServer server([&](const std::string& body) {
    if (body.find("You are the performance analyst") != std::string::npos) {
      ++analyses;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      return Reply{200, Reply200(kAnalysis)};
    }
    return Code("k" + std::to_string(++made));
  });
  Setup setup(server);
  Mutator& mutator = *setup.mutators[0];
  std::vector<MutationResult> results(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = Expand(mutator, Profiled(5), i); });
  }
  for (auto& thread : threads) thread.join();
  CHECK(analyses.load() == 1);
  int paid = 0, first = 0, second = 0;
  for (const MutationResult& result : results) {
    REQUIRE(result.proposal);
    paid += Analyses(result);
    for (const LlmCallRecord& call : result.calls) {
      if (call.purpose == "analysis") CHECK(call.node_id == 5);
    }
    first += result.proposal->mutation == "llm:test-model:rec 1/2: FIRST idea";
    second += result.proposal->mutation == "llm:test-model:rec 2/2: SECOND idea";
  }
  CHECK(paid == 1);
  CHECK(first == 2);  // rank order, then round robin
  CHECK(second == 2);
  // A parent without a profile, or whose profile found nothing, is not
  // analysed: the bandit's direction.
  for (const std::string digest : {"", "not available: command: no profile\nnot available: pmu: none\n"}) {
    ParentView plain = Profiled(6);
    plain.profile_digest = digest;
    const MutationResult unprofiled = Expand(mutator, plain);
    CHECK(Analyses(unprofiled) == 0);
    CHECK(analyses.load() == 1);
  }
}

TEST_CASE("a stored analysis is reused without a call, and earlier children's recommendations count") {
  std::atomic<int> analyses{0}, made{0};
  RoutedServer server([&](const std::string& body) {
    if (body.find("You are the performance analyst") != std::string::npos) ++analyses;
    return Code("k" + std::to_string(++made));
  });
  Setup setup(server);
  ParentView parent = Profiled(9);
  parent.stored_analysis = kAnalysis;
  parent.child_mutations = {"llm:test-model:rec 1/2: FIRST idea", "knob A 1->2"};
  const MutationResult result = Expand(*setup.mutators[0], parent);
  CHECK(analyses.load() == 0);
  CHECK(Analyses(result) == 0);
  REQUIRE(result.proposal);
  CHECK(result.proposal->mutation == "llm:test-model:rec 2/2: SECOND idea");
  REQUIRE(server.bodies().size() == 1);
  CHECK(server.bodies()[0].find("SECOND idea") != std::string::npos);
}

TEST_CASE("an analysis the usd budget cannot hold is not made and the expansion declines as budget spent") {
  RoutedServer server([&](const std::string&) { return Code("never"); });
  Setup setup(server, 1e-9);
  const MutationResult result = Expand(*setup.mutators[0], Profiled(3));
  CHECK(server.bodies().empty());
  CHECK_FALSE(result.proposal);
  CHECK(result.budget_spent);
  CHECK(result.note.find("usd budget") != std::string::npos);
}

}  // namespace
}  // namespace kestrel
