// Stop reasons (search/engine/stop_reason.h): the words stored with a run and
// printed at its end, an error's message included.

#include <doctest.h>

#include "search/engine/stop_reason.h"

using namespace kestrel;

TEST_SUITE("stop_reason") {
  TEST_CASE("each kind is its word, and the word parses back") {
    for (const auto& [kind, word] : {std::pair{StopKind::kTime, "time"}, {StopKind::kEvaluations, "evaluations"},
                                     {StopKind::kUsd, "usd"}, {StopKind::kPlateau, "plateau"},
                                     {StopKind::kExhausted, "exhausted"}, {StopKind::kSignal, "signal"},
                                     {StopKind::kRoofline, "roofline"}}) {
      CAPTURE(word);
      CHECK(ToString(StopReason(kind)) == word);
      CHECK(ParseStopReason(word) == StopReason(kind));
    }
  }

  TEST_CASE("an error carries its message as \"error: MESSAGE\"") {
    const StopReason reason = StopReason::Error("internal error at a.cc:3: check 'x' failed");
    CHECK(reason.kind == StopKind::kError);
    CHECK(ToString(reason) == "error: internal error at a.cc:3: check 'x' failed");
    CHECK(ParseStopReason(ToString(reason)) == reason);
    CHECK(ParseStopReason("error: ")->error.empty());
  }

  TEST_CASE("other text is no stop reason") {
    CHECK_FALSE(ParseStopReason(""));
    CHECK_FALSE(ParseStopReason("error"));
    CHECK_FALSE(ParseStopReason("Time"));
    CHECK_FALSE(ParseStopReason("budget"));
  }

  TEST_CASE("a reason equals its kind; errors differ by message") {
    CHECK(StopReason(StopKind::kUsd) == StopKind::kUsd);
    CHECK_FALSE(StopReason(StopKind::kUsd) == StopKind::kTime);
    CHECK_FALSE(StopReason::Error("a") == StopReason::Error("b"));
  }
}
