// ParseCommandAnswer without a harness: what the validator refuses.

#include "evaluators/command_answer.h"

#include <doctest.h>

#include "tests/testing.h"

namespace kestrel {
namespace {

TEST_SUITE("command_answer") {
  TEST_CASE("a field twice is refused, naming the answer file and the field") {
    const std::vector<Shape> shapes = {{{"n", 4}}};
    const std::string answer = R"({"protocol": 1, "nonce": "abc", "outcome": "measured", "shapes": [
        {"shape": {"n": 4}, "candidate_s": [1e-6], "reference_s": [2e-6], "candidate_s": [9e-9],
         "max_abs_error": 0, "max_rel_error": 0}]})";
    auto parsed = ParseCommandAnswer(answer, shapes, "abc");
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().IsInvalidArgument());
    CHECK(parsed.error().message() == "{answer}: shapes[0].candidate_s: the field appears twice in one object");
  }

  TEST_CASE("the same answer with each field once is measured") {
    const std::vector<Shape> shapes = {{{"n", 4}}};
    const std::string answer = R"({"protocol": 1, "nonce": "abc", "outcome": "measured", "shapes": [
        {"shape": {"n": 4}, "candidate_s": [1e-6], "reference_s": [2e-6], "max_abs_error": 0, "max_rel_error": 0}]})";
    auto parsed = ParseCommandAnswer(answer, shapes, "abc");
    REQUIRE_MESSAGE(parsed.has_value(), testing::ErrorOf(parsed));
    CHECK(parsed->outcome == Outcome::kMeasured);
    CHECK(parsed->shapes.at(0).candidate_seconds == std::vector<double>{1e-6});
    CHECK(!parsed->profile);
  }

  TEST_CASE("an optional profile is parsed with the answer; only a measured answer has one") {
    const std::vector<Shape> shapes = {{{"n", 4}}};
    const std::string answer = R"({"protocol": 1, "nonce": "abc", "outcome": "measured", "shapes": [
        {"shape": {"n": 4}, "candidate_s": [1e-6], "reference_s": [2e-6], "max_abs_error": 0, "max_rel_error": 0}],
        "profile": {"roofline": {"fraction": 0.5, "bound": "memory"}, "unavailable": ["ncu: no GPU"]}})";
    auto parsed = ParseCommandAnswer(answer, shapes, "abc");
    REQUIRE_MESSAGE(parsed.has_value(), testing::ErrorOf(parsed));
    REQUIRE(parsed->profile);
    CHECK(parsed->profile->roofline->fraction == 0.5);
    CHECK(parsed->profile->unavailable == std::vector<std::string>{"ncu: no GPU"});

    auto wrong = ParseCommandAnswer(
        R"({"protocol": 1, "nonce": "abc", "outcome": "wrong", "reason": "y[0]", "profile": {}})", shapes, "abc");
    REQUIRE(!wrong);
    CHECK(wrong.error().message() == "profile: expected no profile when the outcome is wrong");

    auto malformed = ParseCommandAnswer(
        R"({"protocol": 1, "nonce": "abc", "outcome": "measured", "shapes": [
        {"shape": {"n": 4}, "candidate_s": [1e-6], "reference_s": [2e-6], "max_abs_error": 0, "max_rel_error": 0}],
        "profile": {"counters": {"ipc": "high"}}})", shapes, "abc");
    REQUIRE(!malformed);
    CHECK(malformed.error().message() == "profile.counters.ipc: not a number");
  }
}

}  // namespace
}  // namespace kestrel
