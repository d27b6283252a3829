// Ranking sources without knobs before they are built (issue 17): the code
// features a rewrite changes (search/knobs/code_features.h), the cost model
// over them (source_ranker.h), and the LLM mutator asking for several
// versions per call, building the one the model predicts fastest first and
// the rest on the parent's next expansions, without a call, across a resume;
// in a search, a resumed run ranks at once from the stored versions.

#include <doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <numeric>
#include <regex>
#include <atomic>
#include <thread>

#include "search/engine/budget.h"
#include "search/knobs/code_features.h"
#include "search/knobs/knob_advisor.h"
#include "search/knobs/source_ranker.h"
#include "search/llm_search_script.h"
#include "search/mutators/direction_stats.h"
#include "search/mutators/llm_mutator.h"
#include "tests/llm/scripted_server.h"

namespace kestrel {
namespace {

using testing::ScriptedServer;
using namespace llm_search;

float Feature(const CodeFeatureVector& features, std::string_view name) {
  for (std::size_t i = 0; i < kCodeFeatureCount; ++i) {
    if (CodeFeatureName(i) == name) return features[i];
  }
  FAIL("no feature " << name);
  return 0;
}

// A rewrite of the fake task's kernel: its unroll factor decides its speed
// (VersionSpeedup); its tile and tag only make it distinct.
std::string Version(int tag, int unroll, int tile) {
  return fmt::format(
      "// version {}\n#include <cstddef>\nconstexpr int kTile = {};\n"
      "void fake(const float* x, float* y, long n) {{\n#pragma GCC unroll {}\n"
      "  for (long i = 0; i < n; ++i) y[i] = x[i];\n}}\n",
      tag, tile, unroll);
}

double VersionSpeedup(const std::string& source) {
  std::smatch match;
  if (!std::regex_search(source, match, std::regex("unroll ([0-9]+)"))) return 1.0;
  return 1.0 + 0.25 * std::log2(std::stod(match[1]));
}

// A reply holding `versions`, each in its own block, with prose between.
Reply Versions(const std::vector<std::string>& versions) {
  std::string text = "Here are the versions:\n";
  for (std::size_t i = 0; i < versions.size(); ++i) {
    text += fmt::format("Version {}:\n```cpp\n{}```\n", i + 1, versions[i]);
  }
  return {200, Reply200(text)};
}

TEST_SUITE("code features") {
  TEST_CASE("loops, nesting, pragmas, intrinsics and literal sizes are counted; comments and strings are not") {
    const std::string source = R"(#include <immintrin.h>
// for (int never = 0; never < 4096; ++never) a comment's loop
/* _mm512_add_ps(a, b) in a block comment */
constexpr int kTile = 64;
static const char* kName = "for _mm256_fmadd_ps 1024";
void k(const float* __restrict a, float* __restrict b, long n) {
  #pragma omp parallel for simd
  for (long i = 0; i < n; i += kTile) {
    #pragma GCC unroll 8
    for (long j = 0; j < kTile; ++j) {
      __m256 v = _mm256_loadu_ps(a + i + j);
      v = _mm256_fmadd_ps(v, v, v);
      _mm256_storeu_ps(b + i + j, v);
    }
  }
}
)";
    const CodeFeatureVector f = CodeFeatures(source);
    CHECK(Feature(f, "for_loops") == 2);
    CHECK(Feature(f, "loop_depth") == 2);
    CHECK(Feature(f, "brace_depth") == 3);
    CHECK(Feature(f, "omp_parallel") == 1);
    CHECK(Feature(f, "omp_simd") == 1);
    CHECK(Feature(f, "unroll_pragmas") == 1);
    CHECK(Feature(f, "unroll_factor_log2") == 3);
    CHECK(Feature(f, "avx_intrinsics") == 3);
    CHECK(Feature(f, "avx512_intrinsics") == 0);  // only in a comment
    CHECK(Feature(f, "fma") == 1);                // not the string's
    CHECK(Feature(f, "restrict") == 2);
    CHECK(Feature(f, "vector_types") == 1);
    CHECK(Feature(f, "constexpr") == 1);
    CHECK(Feature(f, "literal_64_127") == 1);   // kTile
    CHECK(Feature(f, "literal_256_up") == 0);   // 4096 and 1024 are in a comment and a string
    CHECK(Feature(f, "cuda_shared") == 0);
  }

  TEST_CASE("CUDA's shared memory, barriers, shuffles and half types; knob values count as their literals") {
    const std::string cuda = R"(__global__ void k(const __half* x, float* y) {
  __shared__ float tile[32][33];
  float v = __shfl_down_sync(0xffffffff, tile[threadIdx.x][0], 16);
  __syncthreads();
  y[0] = v + __half2float(x[0]);
})";
    const CodeFeatureVector f = CodeFeatures(cuda);
    CHECK(Feature(f, "cuda_shared") == 1);
    CHECK(Feature(f, "barriers") == 1);
    CHECK(Feature(f, "shuffles") == 1);
    CHECK(Feature(f, "half_types") == 1);
    CHECK(Feature(f, "literal_32_63") == 2);   // 32, 33
    CHECK(Feature(f, "literal_16_31") == 1);
    CHECK(Feature(f, "literal_256_up") == 1);  // the mask
    const std::string knobbed = "// kestrel:knob TILE 16 128\nvoid k() { int a[TILE]; }\n";
    const CodeFeatureVector substituted = CodeFeatures(SubstituteKnobs(knobbed, {{"TILE", "128"}}));
    CHECK(Feature(substituted, "literal_128_255") == 1);
    CHECK(Feature(substituted, "literal_16_31") == 0);
  }

  TEST_CASE("named integer constants are read by name: the same name lands in the same slot, the first definition counts") {
    const auto slots = [](const CodeFeatureVector& f) {
      std::vector<float> values;
      for (std::size_t i = 0; i < kCodeFeatureCount; ++i) {
        if (CodeFeatureName(i).substr(0, 9) == "constant_") values.push_back(f[i]);
      }
      return values;
    };
    const std::string a = "#define TILE 64\nconstexpr int kUnroll = 4;\nstatic const long kSteps = 0;\nvoid k() {}\n";
    const std::string b = "#define TILE 128\nconstexpr int kUnroll = 4;\nstatic const long kSteps = 0;\nvoid k() {}\n";
    const std::vector<float> first = slots(CodeFeatures(a)), second = slots(CodeFeatures(b));
    REQUIRE(first.size() == 16);
    float total = 0;
    int differ = 0;
    for (std::size_t i = 0; i < first.size(); ++i) {
      total += first[i];
      if (first[i] != second[i]) {
        ++differ;
        CHECK(second[i] - first[i] == doctest::Approx(std::log2(130.0) - std::log2(66.0)));
      }
    }
    CHECK(differ == 1);  // only TILE's slot moved
    CHECK(total == doctest::Approx(std::log2(66.0) + std::log2(6.0) + 1.0));
    // Not constants: a comparison, a function-like macro, a computed value, a default argument.
    const std::string none =
        "#define SQ(x) ((x) * (x))\nconst int kN = sizeof(float);\nvoid k(const int n = 4) { if (n == 3) {} }\n";
    for (float slot : slots(CodeFeatures(none))) CHECK(slot == 0);
    // A knob's substituted value comes first and wins over its #ifndef default.
    const std::string knobbed = "// kestrel:knob TILE 16 128\n#ifndef TILE\n#define TILE 16\n#endif\nvoid k() {}\n";
    const std::vector<float> substituted = slots(CodeFeatures(SubstituteKnobs(knobbed, {{"TILE", "128"}})));
    CHECK(std::accumulate(substituted.begin(), substituted.end(), 0.0f) == doctest::Approx(std::log2(130.0)));
  }

  TEST_CASE("every feature has a distinct name") {
    std::set<std::string_view> names;
    for (std::size_t i = 0; i < kCodeFeatureCount; ++i) CHECK(names.insert(CodeFeatureName(i)).second);
    CHECK(CodeFeatureName(kCodeFeatureCount).empty());
  }
}

TEST_SUITE("source ranker") {
  TEST_CASE("it predicts nothing until enough sources are measured, then ranks unseen ones by what it learned") {
    SourceRanker ranker;
    const std::vector<int> unrolls = {1, 2, 4, 8, 16, 32};
    for (std::size_t i = 0; i + 1 < unrolls.size(); ++i) {
      const std::string source = Version(static_cast<int>(i), unrolls[i], 16 << i);
      ranker.Observe(i + 1, source, VersionSpeedup(source));
    }
    ranker.Observe(50, "void fake() { broken", std::nullopt);  // a failure is a row, not a measurement
    CHECK(ranker.measured() == unrolls.size() - 1);
    const std::string fast = Version(90, 16, 4096), slow = Version(91, 2, 4096);
    CHECK_FALSE(ranker.Predict({fast, slow}).has_value());
    const std::string last = Version(9, 32, 8);
    ranker.Observe(6, last, VersionSpeedup(last));
    const auto predicted = ranker.Predict({slow, fast});
    REQUIRE(predicted.has_value());
    REQUIRE(predicted->size() == 2);
    CHECK((*predicted)[1] > (*predicted)[0]);
  }

  TEST_CASE("the model depends on the observations, not on the order they arrived in; the window keeps the latest") {
    std::vector<std::pair<NodeId, std::string>> rows;
    for (int i = 0; i < 40; ++i) rows.emplace_back(100 + i, Version(i, 1 << (i % 6), 8 << (i % 5)));
    SourceRanker forward, backward;
    for (const auto& [node, source] : rows) forward.Observe(node, source, VersionSpeedup(source));
    for (auto it = rows.rbegin(); it != rows.rend(); ++it) backward.Observe(it->first, it->second, VersionSpeedup(it->second));
    const std::vector<std::string_view> probe = {rows[3].second, rows[17].second, rows[29].second};
    CHECK(*forward.Predict(probe) == *backward.Predict(probe));

    SourceRanker window;
    for (std::size_t i = 0; i < SourceRanker::kWindow + 10; ++i) window.Observe(1000 + i, "void fake() {}", 1.5);
    CHECK(window.measured() == SourceRanker::kWindow);
    window.Observe(5, "void fake() {}", 1.5);  // older than every kept node: ignored
    CHECK(window.measured() == SourceRanker::kWindow);
  }

  TEST_CASE("observations and predictions from several threads: the final model is the serial one's") {
    // What the engine does: the record stage observes while llm mutators on
    // other threads rank replies (each prediction may fit).
    std::vector<std::pair<NodeId, std::string>> rows;
    for (int i = 0; i < 300; ++i) rows.emplace_back(100 + i, Version(i, 1 << (i % 6), 8 << (i % 5)));
    const std::vector<std::string_view> probe = {rows[3].second, rows[17].second, rows[29].second};
    SourceRanker shared, serial;
    std::atomic<bool> done{false};
    std::atomic<int> ranked{0};
    std::vector<std::thread> predictors;
    for (int t = 0; t < 2; ++t) {
      predictors.emplace_back([&] {
        for (int mine = 0; !done.load() || mine < 3;) {  // at least three each
          const auto predicted = shared.Predict(probe);
          if (predicted && predicted->size() == probe.size()) ++mine, ++ranked;
        }
      });
    }
    for (const auto& [node, source] : rows) {
      shared.Observe(node, source, VersionSpeedup(source));
      serial.Observe(node, source, VersionSpeedup(source));
    }
    done = true;
    for (std::thread& predictor : predictors) predictor.join();
    CHECK(ranked.load() >= 6);
    CHECK(shared.measured() == serial.measured());
    CHECK(*shared.Predict(probe) == *serial.Predict(probe));
  }
}

struct Mutators {
  explicit Mutators(ScriptedServer& server, int variants) {
    config = SearchConfig(server);
    config.mutators[0].combine_share = 0;
    config.mutators[0].variants = variants;
    budget = std::make_shared<Budget>(config.budget);
    auto made = MakeMutators(config, task, HostInfo{}, budget);
    REQUIRE_MESSAGE(made.has_value(), testing::ErrorOf(made));
    mutator = std::move((*made)[0]);
  }
  RunConfig config;
  Task task = testing::MakeFakeTask();
  std::shared_ptr<Budget> budget;
  std::unique_ptr<Mutator> mutator;
};

MutationResult ExpandSeed(Mutator& mutator, std::shared_ptr<KnobAdvisor> advisor = nullptr) {
  ParentView parent{1, {testing::kFakeSeed, {{"A", "1"}, {"B", "1"}, {"C", "0"}}, "fake-cc", {"-O2"}}};
  parent.advisor = std::move(advisor);
  std::mt19937_64 rng(3);
  return mutator.Expand(parent, rng, [](const std::string&) { return false; });
}

TEST_SUITE("llm variants") {
  TEST_CASE("one call asks for the versions; the others are built on the next expansions without a call") {
    const std::vector<std::string> versions = {Version(1, 2, 16), Version(2, 4, 16), Version(3, 8, 16)};
    ScriptedServer server({Versions(versions), Versions({Version(4, 1, 8), Version(5, 1, 16), Version(6, 1, 32)})});
    Mutators setup(server, 3);
    const MutationResult first = ExpandSeed(*setup.mutator);
    REQUIRE(first.proposal);
    REQUIRE(first.calls.size() == 1);
    CHECK(first.calls[0].error.empty());
    CHECK(first.proposal->candidate.source == versions[0]);  // no model: the reply's order
    CHECK(first.proposal->candidate.toolchain == "fake-cc");
    CHECK(first.proposal->mutation.find("(version 1 of 3)") != std::string::npos);
    const auto seen = server.seen();
    REQUIRE(seen.size() == 1);
    CHECK(seen[0].body.find("Answer with 3 fenced code blocks") != std::string::npos);
    // What the engine reads to build them before the strategy's next choice.
    CHECK(setup.mutator->Waiting() == std::vector<std::pair<NodeId, std::size_t>>{{1, 2}});

    // The state a resumed run restores holds the waiting versions.
    const std::string saved = setup.mutator->SaveState();
    Mutators resumed(server, 3);
    REQUIRE(resumed.mutator->RestoreState(saved).has_value());
    for (Mutator* mutator : {setup.mutator.get(), resumed.mutator.get()}) {
      const MutationResult second = ExpandSeed(*mutator);
      REQUIRE(second.proposal);
      CHECK(second.calls.empty());
      CHECK(second.proposal->candidate.source == versions[1]);
      CHECK(second.proposal->mutation.find("(version 2 of 3)") != std::string::npos);
      const MutationResult third = ExpandSeed(*mutator);
      REQUIRE(third.proposal);
      CHECK(third.calls.empty());
      CHECK(third.proposal->candidate.source == versions[2]);
    }
    CHECK(server.seen().size() == 1);
    const MutationResult fourth = ExpandSeed(*setup.mutator);  // nothing waits: a new call
    CHECK(fourth.calls.size() == 1);
    CHECK(server.seen().size() == 2);
    CHECK(resumed.mutator->RestoreState(R"({"bandit": {}, "followed": [], "waiting": [{"parent": 1}]})").has_value() == false);
  }

  TEST_CASE("with a fitted model the version predicted fastest is built first, its prediction in the mutation") {
    auto advisor = std::make_shared<KnobAdvisor>(KnobAdvisor::Mode::kModel);
    for (int i = 0; i < 8; ++i) {
      const std::string source = Version(100 + i, 1 << (i % 6), 8 << (i % 4));
      advisor->Observe(10 + i, source, {}, VersionSpeedup(source), "llm:test-model:x", false);
    }
    // The fastest last, the slowest first.
    const std::vector<std::string> versions = {Version(1, 1, 64), Version(2, 4, 64), Version(3, 16, 64)};
    ScriptedServer server({Versions(versions)});
    Mutators setup(server, 3);
    const MutationResult first = ExpandSeed(*setup.mutator, advisor);
    REQUIRE(first.proposal);
    CHECK(first.proposal->candidate.source == versions[2]);
    CHECK(first.proposal->mutation.find("(version 3 of 3, ") != std::string::npos);
    CHECK(first.proposal->mutation.find("x predicted)") != std::string::npos);
    const MutationResult second = ExpandSeed(*setup.mutator, advisor);
    REQUIRE(second.proposal);
    CHECK(second.proposal->candidate.source == versions[1]);
  }

  TEST_CASE("a reply with one block when several were asked: a plain proposal, nothing waits") {
    ScriptedServer server({Versions({Version(1, 2, 16)}), Versions({Version(2, 4, 16)})});
    Mutators setup(server, 3);
    const MutationResult first = ExpandSeed(*setup.mutator);
    REQUIRE(first.proposal);
    CHECK(first.proposal->mutation.find("(version") == std::string::npos);
    CHECK(first.proposal->mutation.find("predicted") == std::string::npos);
    CHECK(setup.mutator->Waiting().empty());
    // With a fitted model its prediction is still stated.
    auto advisor = std::make_shared<KnobAdvisor>(KnobAdvisor::Mode::kModel);
    for (int i = 0; i < 8; ++i) {
      const std::string source = Version(100 + i, 1 << (i % 6), 8 << (i % 4));
      advisor->Observe(10 + i, source, {}, VersionSpeedup(source), "llm:test-model:x", false);
    }
    const MutationResult second = ExpandSeed(*setup.mutator, advisor);
    REQUIRE(second.proposal);
    CHECK(second.proposal->mutation.find("(version") == std::string::npos);
    CHECK(PredictedSpeedup(second.proposal->mutation).has_value());
  }

  TEST_CASE("a version with a bad knob declaration is refused with the reason; the others are kept") {
    const std::string bad = "// kestrel:knob T\n" + Version(2, 4, 16);
    ScriptedServer server({Versions({Version(1, 2, 16), bad})});
    Mutators setup(server, 2);
    const MutationResult first = ExpandSeed(*setup.mutator);
    REQUIRE(first.proposal);
    REQUIRE(first.calls.size() == 1);
    CHECK(first.calls[0].error.find("1 of 2 versions refused: version 2: bad knob declaration") != std::string::npos);
    const MutationResult second = ExpandSeed(*setup.mutator);
    CHECK(second.calls.size() == 1);  // nothing waited
  }
}

TEST_SUITE("llm variants in a search") {
  // Each reply holds three versions, the fastest last: only a model that
  // learned what the unroll factor does builds it first.
  std::vector<Reply> Replies(int count) {
    std::vector<Reply> replies;
    for (int r = 0; r < count; ++r) {
      const int slow = r % 3, fast = 3 + r % 3;  // unroll 1..4, then 8..32
      replies.push_back(Versions({Version(10 * r + 1, 1 << slow, 8 << (r % 4)), Version(10 * r + 2, 2 << slow, 8 << (r % 4)),
                                  Version(10 * r + 3, 1 << fast, 8 << (r % 4))}));
    }
    return replies;
  }

  int ReplyOf(const std::string& source) {
    std::smatch match;
    REQUIRE(std::regex_search(source, match, std::regex("// version ([0-9]+)")));
    return std::stoi(match[1]) / 10;
  }

  TEST_CASE("the model strategy builds every version of a reply, the predicted fastest first, and a resumed run at once") {
    ScriptedServer server(Replies(40));
    testing::Harness harness;
    testing::FakeEvaluator evaluator(Speedup, OutcomeOf);
    evaluator.JudgeSourcesWith(VersionSpeedup);
    RunConfig config = SearchConfig(server);
    config.mutators[0].combine_share = 0;
    config.mutators[0].variants = 3;
    config.budget.evaluations = 12;
    config.budget.time = Seconds(60);
    REQUIRE(config.strategy.name == "model");
    Must(harness.Run(evaluator, config));
    NodeId last_before_resume = 0;
    for (const NodeRecord& node : harness.Nodes()) last_before_resume = std::max<NodeId>(last_before_resume, node.id);
    config.budget.evaluations = 40;
    Must(harness.Resume(evaluator, config));

    // Per reply, its built versions in the order they were built.
    std::map<int, std::vector<NodeRecord>> by_reply;
    for (const NodeRecord& brief : harness.Nodes()) {
      if (brief.mutation.rfind("llm:", 0) != 0) continue;
      const NodeRecord node = Must(harness.store().GetNode(brief.id));
      by_reply[ReplyOf(node.source)].push_back(node);
    }
    REQUIRE(by_reply.size() >= 10);
    int ranked = 0, unranked = 0;
    std::optional<NodeRecord> first_after_resume;
    for (const auto& [reply, nodes] : by_reply) {
      CAPTURE(reply);
      // What was paid for is built: every version, before the next call
      // (the last reply may be cut by the budget).
      if (reply != by_reply.rbegin()->first) CHECK(nodes.size() == 3);
      const NodeRecord& first = nodes.front();
      CAPTURE(first.mutation);
      if (first.id > last_before_resume && (!first_after_resume || first.id < first_after_resume->id)) {
        first_after_resume = first;
      }
      if (first.mutation.find("x predicted)") == std::string::npos) {
        // Before the model has SourceRanker::kMinToFit measured versions: the reply's order.
        ++unranked;
        CHECK(first.mutation.find("(version 1 of 3)") != std::string::npos);
        continue;
      }
      ++ranked;
      CHECK(VersionSpeedup(first.source) == doctest::Approx(1.0 + 0.25 * (3 + reply % 3)));  // the reply's fastest
      if (nodes.size() == 3) CHECK(VersionSpeedup(nodes[1].source) > VersionSpeedup(nodes[2].source));
    }
    // Three versions measured per reply: the first kMinToFit / 3 replies are built unranked.
    CHECK(unranked == static_cast<int>((SourceRanker::kMinToFit + 2) / 3));
    CHECK(ranked >= 8);
    // The resumed run's model learned from the stored versions: its first
    // reply is ranked.
    REQUIRE(first_after_resume);
    CHECK(first_after_resume->mutation.find("x predicted)") != std::string::npos);
  }

  TEST_CASE("versions waiting when a run stops are built by its resumed session without a call") {
    // Every version (unroll 1: 1.0x) is slower than the seed (1.14x), so
    // greedy keeps expanding the seed: the first session builds the seed and
    // the reply's first version, the resumed one the other two.
    ScriptedServer server({Versions({Version(1, 1, 8), Version(2, 1, 16), Version(3, 1, 32)}),
                           Versions({Version(4, 1, 64), Version(5, 1, 128), Version(6, 1, 256)})});
    testing::Harness harness;
    testing::FakeEvaluator evaluator(Speedup, OutcomeOf);
    evaluator.JudgeSourcesWith(VersionSpeedup);
    RunConfig config = SearchConfig(server);
    config.strategy.name = "greedy";
    config.mutators[0].combine_share = 0;
    config.mutators[0].variants = 3;
    config.budget.evaluations = 2;
    Must(harness.Run(evaluator, config));
    REQUIRE(server.seen().size() == 1);
    config.budget.evaluations = 4;
    Must(harness.Resume(evaluator, config));
    CHECK(server.seen().size() == 1);  // the resumed session asked nothing
    std::vector<std::string> made;
    for (const NodeRecord& node : harness.Nodes()) {
      if (node.mutation.rfind("llm:", 0) == 0) made.push_back(node.mutation.substr(node.mutation.find(" (version")));
    }
    CHECK(made == std::vector<std::string>{" (version 1 of 3)", " (version 2 of 3)", " (version 3 of 3)"});
  }
}

}  // namespace
}  // namespace kestrel
