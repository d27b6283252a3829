// MutationPrompt and FixPrompt: each part LLM.md lists is in the request.

#include "search/mutators/prompt.h"

#include <doctest.h>

#include <algorithm>
#include <string>

namespace kestrel {
namespace {

Task MakeTask() {
  Task task;
  task.name = "axpy";
  task.description = "y = 2x + 1";
  task.language = "cpp";
  task.entry = "axpy";
  task.args = {{"x", ArgRole::kInput, ScalarType::kF32, {"n"}, {}},
               {"y", ArgRole::kOutput, ScalarType::kF32, {"n"}, {}},
               {"n", ArgRole::kDim, ScalarType::kI64, {}, {}}};
  task.shapes = {{{"n", 4096}}};
  task.check_shapes = {{{"n", 7}}};
  task.tolerance = {1e-5, 1e-6};
  task.reference = {"reference.cpp", "void axpy(const float* x, float* y, int64_t n) { /* REFERENCE BODY */ }\n"};
  return task;
}

HostInfo MakeHost() {
  HostInfo host;
  host.cpu_model = "Test CPU 9000";
  host.cores = 16;
  host.isa = "avx2 fma";
  host.l1d_bytes = 32 * 1024;
  host.l2_bytes = 1024 * 1024;
  return host;
}

std::string UserText(const LlmRequest& request) {
  REQUIRE(request.messages.size() == 1);
  CHECK(request.messages[0].role == "user");
  return request.messages[0].content;
}

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST_CASE("a mutation prompt carries hardware, task, parent, lineage, inspirations, failures, direction, format") {
  const Task task = MakeTask();
  MutationPromptInput input;
  input.task = &task;
  input.parent = {"// kestrel:knob U 1 2\nvoid axpy(const float* x, float* y, int64_t n) { /* PARENT */ }\n",
                  {{"U", "2"}}, "cc", {"-O3"}};
  input.measurement = "1.50x speedup over the reference";
  input.lineage = {{"seed:seed.cpp", "1.00x"}, {"knob U 1->2", "1.50x"}};
  input.inspirations = {{2, 1.75, "llm:m:vectorize", "void axpy(const float* x, float* y, int64_t n) { /* INSPIRATION */ }"}};
  input.recent_failures = {"llm:m:unroll: build_failed (expected ';')"};
  input.direction = "tile for cache";
  input.host = MakeHost();
  input.threads = 4;
  input.max_tokens = 1234;
  input.temperature = 0.3;
  const LlmRequest request = MutationPrompt(input);
  const std::string text = UserText(request);
  CHECK_FALSE(request.system.empty());
  CHECK(request.max_tokens == 1234);
  CHECK(request.temperature == doctest::Approx(0.3));
  CHECK(Has(text, "Test CPU 9000"));
  CHECK(Has(text, "avx2 fma"));
  CHECK(Has(text, "cores: 16"));
  CHECK(Has(text, "up to 4 threads"));
  CHECK(Has(text, task.Signature()));
  CHECK(Has(text, "n=4096"));
  CHECK(Has(text, "n=7"));
  CHECK(Has(text, "1e-06 + 1e-05*|ref|"));
  CHECK(Has(text, "REFERENCE BODY"));
  CHECK(Has(text, "/* PARENT */"));
  CHECK(Has(text, "U=2"));
  CHECK(Has(text, "1.50x speedup"));
  CHECK(Has(text, "- seed:seed.cpp: 1.00x"));
  CHECK(Has(text, "- knob U 1->2: 1.50x"));
  CHECK(Has(text, "Rank 2: 1.75x (llm:m:vectorize)\n```cpp\nvoid axpy(const float* x, float* y, int64_t n) { /* INSPIRATION */ }"));
  CHECK(Has(text, "expected ';'"));
  CHECK(Has(text, "- compiler: cc\n- flags: -O3\n"));
  CHECK(Has(text, "Focus on this idea: tile for cache"));
  CHECK(Has(text, "one fenced code block"));
  CHECK(Has(text, "// kestrel:knob NAME v1 v2"));
}

TEST_CASE("empty parts are left out; single-threaded tasks say so") {
  const Task task = MakeTask();
  MutationPromptInput input;
  input.task = &task;
  input.parent = {"void axpy() {}", {}, "cc", {}};
  input.direction = "unroll";
  const std::string text = UserText(MutationPrompt(input));
  CHECK_FALSE(Has(text, "lineage"));
  CHECK_FALSE(Has(text, "inspiration"));
  CHECK_FALSE(Has(text, "Recent failures"));
  CHECK_FALSE(Has(text, "Where the parent stands"));
  CHECK_FALSE(Has(text, "recommends"));
  CHECK(Has(text, "single-threaded"));
}

// The parts issue 18 adds: where the parent stands (roofline, the expert
// baseline, the profile digest) and a recommendation instead of a word.
MutationPromptInput StandingInput(const Task& task) {
  MutationPromptInput input;
  input.task = &task;
  input.parent = {"void axpy(const float* x, float* y, int64_t n) { /* PARENT */ }\n", {}, "g++ 12.2.0",
                  {"-O3", "-march=native"}};
  input.measurement = "1.50x speedup over the reference";
  input.profile_digest = "roofline: memory bound, 42% of L2 bandwidth\npacked fp: 0%\n";
  input.roofline_fraction = 0.42;
  input.bound = "memory";
  input.baseline_speedup = 3.25;
  input.host = MakeHost();
  return input;
}

TEST_CASE("a mutation prompt states the roofline, the baseline, the profile, the compiler and the recommendation") {
  const Task task = MakeTask();
  MutationPromptInput input = StandingInput(task);
  input.recommendation = Recommendation{"tile the n loop by 64", "1.4x"};
  input.rank = 2;
  input.recommendations = 3;
  const LlmRequest request = MutationPrompt(input);
  const std::string text = UserText(request);
  CHECK(Has(text, "- compiler: g++ 12.2.0\n- flags: -O3 -march=native\n"));
  CHECK(Has(text, "- roofline: 42% of the memory roof reached\n"));
  CHECK(Has(text, "- the expert baseline runs 3.25x faster than the reference\n"));
  CHECK(Has(text, "packed fp: 0%"));
  CHECK(Has(text, "(recommendation 2 of 3): tile the n loop by 64\nExpected gain: 1.4x\n"));
  CHECK_FALSE(Has(text, "Focus on this idea"));
  CHECK(Has(text, "one fenced code block"));
  CHECK(MutationPrompt(input).messages[0].content == text);  // deterministic
}

TEST_CASE("an analysis prompt asks for bottlenecks and ranked recommendations in JSON, without code") {
  const Task task = MakeTask();
  const LlmRequest request = AnalysisPrompt(StandingInput(task));
  const std::string text = UserText(request);
  CHECK(Has(request.system, "JSON"));
  CHECK(Has(text, "/* PARENT */"));
  CHECK(Has(text, "packed fp: 0%"));
  CHECK(Has(text, "42% of the memory roof"));
  CHECK(Has(text, "3.25x faster"));
  CHECK(Has(text, "\"bottlenecks\": [{\"name\": \"...\", \"evidence\": \"...\"}]"));
  CHECK(Has(text, "\"recommendations\": [{\"change\": \"...\", \"expected_gain\": \"...\"}]"));
  CHECK(Has(text, "at most 3 changes"));
  CHECK_FALSE(Has(text, "one fenced code block"));
}

TEST_CASE("plan then implement: the plan prompt asks for a plan, the implementation prompt carries it") {
  const Task task = MakeTask();
  MutationPromptInput input = StandingInput(task);
  input.direction = "vectorize";
  const std::string plan = UserText(PlanPrompt(input));
  CHECK(Has(plan, "Focus on this idea: vectorize"));
  CHECK(Has(plan, "short numbered plan"));
  CHECK_FALSE(Has(plan, "one fenced code block"));
  input.plan = "1. split the loop\n2. use 8-wide vectors";
  const std::string implement = UserText(MutationPrompt(input));
  CHECK(Has(implement, "## Plan to implement\n1. split the loop\n2. use 8-wide vectors\n"));
  CHECK(Has(implement, "one fenced code block"));
}

TEST_CASE("the directions cover the list in LLM.md") {
  const auto& directions = MutationDirections();
  for (const char* direction : {"vectorize", "tile for cache", "reorder loops", "fuse passes", "unroll",
                                "reduce precision where the tolerance allows", "use threads where allowed"}) {
    CAPTURE(direction);
    CHECK(std::find(directions.begin(), directions.end(), direction) != directions.end());
  }
}

TEST_CASE("a fix prompt carries the failing source, outcome, reason and the trimmed log") {
  const Task task = MakeTask();
  std::string log;
  for (int i = 0; i < 200; ++i) log += "kernel.cpp:" + std::to_string(i) + ": error: nope\n";
  const LlmRequest request = FixPrompt(task, {"void axpy() { /* FAILING */ }", {}, "cc", {}}, Outcome::kBuildFailed,
                                       "the compiler failed", log, MakeHost(), 1, 999, 0.2);
  const std::string text = UserText(request);
  CHECK(request.max_tokens == 999);
  CHECK(Has(text, "/* FAILING */"));
  CHECK(Has(text, "Outcome: build_failed"));
  CHECK(Has(text, "Reason: the compiler failed"));
  CHECK(Has(text, "kernel.cpp:0: error"));
  CHECK_FALSE(Has(text, "kernel.cpp:150: error"));
  CHECK(Has(text, "[... trimmed]"));
  CHECK(Has(text, task.Signature()));
  CHECK(Has(text, "REFERENCE BODY"));
  CHECK(Has(text, "corrected complete file"));
}

TEST_CASE("a combine prompt holds both parents' code, knobs and measurements, named by node") {
  const Task task = MakeTask();
  const CombineParent first{12, {"void axpy(const float* x, float* y, int64_t n) { /* FIRST */ }\n", {{"U", "4"}}, "cc", {}},
                            "1.80x; n=4096: 1.2e-4 s"};
  const CombineParent second{40, {"void axpy(const float* x, float* y, int64_t n) { /* SECOND */ }\n", {}, "cc", {}},
                             "2.10x; n=4096: 1.0e-4 s"};
  const LlmRequest request = CombinePrompt(task, first, second, MakeHost(), 1, 777, 0.5);
  const std::string text = UserText(request);
  CHECK(request.max_tokens == 777);
  CHECK(request.temperature == doctest::Approx(0.5));
  CHECK(Has(text, task.Signature()));
  CHECK(Has(text, "REFERENCE BODY"));
  CHECK(Has(text, "## Version #12\n```cpp\nvoid axpy(const float* x, float* y, int64_t n) { /* FIRST */ }\n```\n"));
  CHECK(Has(text, "Knob values of this version: U=4"));
  CHECK(Has(text, "Its latest measurement: 1.80x; n=4096: 1.2e-4 s"));
  CHECK(Has(text, "## Version #40\n```cpp\nvoid axpy(const float* x, float* y, int64_t n) { /* SECOND */ }\n```\n"));
  CHECK(Has(text, "Its latest measurement: 2.10x; n=4096: 1.0e-4 s"));
  CHECK(text.find("/* FIRST */") < text.find("/* SECOND */"));
  CHECK(Has(text, "Combine versions #12 and #40 into one kernel that takes the best of each"));
  CHECK(Has(text, "exactly one fenced code block"));
  CHECK(Has(text, "single-threaded"));
}

TEST_CASE("a person's guidance is appended to a prompt: instructions, lineage notes, rejections; none leaves it as it was") {
  const Task task = MakeTask();
  const LlmRequest plain = MutationPrompt(StandingInput(task));
  CHECK(UserText(WithGuidance(plain, HumanGuidance{})) == UserText(plain));
  HumanGuidance human;
  human.instructions = {"use AVX-512", "keep the reduction in double"};
  human.notes = {"node 1 (seed:seed.cpp): the tail loop must stay scalar"};
  human.rejections = {"unrolling by two is not worth a node"};
  const std::string text = UserText(WithGuidance(plain, human));
  CHECK(text.rfind(UserText(plain), 0) == 0);  // the prompt first, unchanged
  CHECK(Has(text, "## Instructions from the person running this search\nFollow these in every version you write:\n"
                  "- use AVX-512\n- keep the reduction in double\n"));
  CHECK(Has(text, "## Notes of the person running this search on this lineage\n- node 1 (seed:seed.cpp): the tail loop must stay scalar\n"));
  CHECK(Has(text, "rejected, and why\nDo not repeat them:\n- unrolling by two is not worth a node\n"));
  // The fix prompt carries it the same way.
  const LlmRequest fix = FixPrompt(task, {"void axpy() {}", {}, "cc", {}}, Outcome::kWrong, "differs", "", MakeHost());
  CHECK(Has(UserText(WithGuidance(fix, human)), "- use AVX-512\n"));
}

TEST_CASE("TrimLog keeps short logs whole") {
  CHECK(TrimLog("a\nb\n") == "a\nb\n");
  CHECK(TrimLog("") == "");
}

}  // namespace
}  // namespace kestrel
