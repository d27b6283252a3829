// Diagnose (evaluators/diagnosis.h): what `kestrel doctor` asks of
// evaluators/, for a run config's evaluator block.

#include "evaluators/diagnosis.h"

#include <algorithm>

#include <doctest.h>

namespace kestrel {
namespace {

const Check* Find(const std::vector<Check>& checks, const std::string& name) {
  const auto found = std::find_if(checks.begin(), checks.end(), [&](const Check& check) { return check.name == name; });
  return found == checks.end() ? nullptr : &*found;
}

TEST_SUITE("diagnosis") {
  TEST_CASE("check states have names that parse back") {
    for (CheckState state : {CheckState::kOk, CheckState::kWarn, CheckState::kFail}) {
      CHECK(ParseCheckState(ToString(state)) == state);
    }
    CHECK(ToString(CheckState::kWarn) == "warn");
    CHECK_FALSE(ParseCheckState("skip").has_value());
  }

  TEST_CASE("the compiler, runner, each sandbox layer and cuda, in that order; the commands for kind command") {
    EvaluatorConfig config;
    const std::vector<Check> checks = Diagnose(config);
    REQUIRE(checks.size() >= 4);
    CHECK(checks.front().name == "compiler");
    CHECK(checks.front().state == CheckState::kOk);
    CHECK(checks[1].name == "runner");
    CHECK(checks[2].name.rfind("sandbox: ", 0) == 0);
    CHECK(checks.back().name == "cuda");
    CHECK(checks.back().state != CheckState::kFail);  // no GPU is a warning
    CHECK(Find(checks, "evaluator") == nullptr);

    config.kind = "command";
    config.compiler = "no-such-compiler-xyz";
    config.run = {"bench", "{sauce}"};
    const std::vector<Check> command = Diagnose(config);
    const Check* compiler = Find(command, "compiler");
    REQUIRE(compiler != nullptr);
    CHECK(compiler->state == CheckState::kFail);
    CHECK_FALSE(compiler->fix.empty());
    const Check* evaluator = Find(command, "evaluator");
    REQUIRE(evaluator != nullptr);
    CHECK(evaluator->state == CheckState::kFail);
    CHECK_MESSAGE(evaluator->detail.find("unknown placeholder {sauce}") != std::string::npos, evaluator->detail);

    config.run = {"no-such-harness-xyz", "{answer}"};
    const std::vector<Check> missing_program = Diagnose(config);
    const Check* missing = Find(missing_program, "evaluator");
    REQUIRE(missing != nullptr);
    CHECK(missing->state == CheckState::kFail);
    CHECK(missing->fix == "install it or fix the run config");

    // The run command's own sandbox: bubblewrap (required here), or off by choice.
    const Check* confined = Find(missing_program, "sandbox: run command");
    REQUIRE(confined != nullptr);
    CHECK(confined->state == CheckState::kOk);
    CHECK_MESSAGE(confined->detail.find("network") != std::string::npos, confined->detail);
    config.sandbox = "none";
    const std::vector<Check> unconfined = Diagnose(config);
    const Check* off = Find(unconfined, "sandbox: run command");
    REQUIRE(off != nullptr);
    CHECK(off->state == CheckState::kWarn);
    CHECK(off->detail.rfind("OFF", 0) == 0);
    CHECK(Find(checks, "sandbox: run command") == nullptr);  // kind cpu: its workers' layers above
  }

  TEST_CASE("each profile source is a check: ok where it works, else a warning with its reason and fix") {
    EvaluatorConfig config;
    const std::vector<Check> checks = DiagnoseProfileSources(config);
    for (const char* name : {"profile: pmu", "profile: cachegrind", "profile: objdump", "profile: compiler remarks",
                             "profile: ncu"}) {
      const Check* check = Find(checks, name);
      REQUIRE_MESSAGE(check != nullptr, name);
      CHECK(check->state != CheckState::kFail);  // a profile does without any of them
      CHECK(!check->detail.empty());
      CHECK((check->state == CheckState::kOk) == check->fix.empty());
    }
    CHECK(Find(checks, "profile: objdump")->state == CheckState::kOk);
    config.compiler = "no-such-compiler-xyz";
    const std::vector<Check> broken = DiagnoseProfileSources(config);
    const Check* remarks = Find(broken, "profile: compiler remarks");
    REQUIRE(remarks != nullptr);
    CHECK(remarks->state == CheckState::kWarn);
    CHECK(remarks->fix == "set evaluator.compiler to a working compiler");
  }
}

}  // namespace
}  // namespace kestrel
