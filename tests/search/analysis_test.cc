// ParseAnalysis (llm/analysis.h): the analyst's JSON is read
// bare, fenced or amid prose; a reply that is not an analysis is refused
// with a message for the call's record.

#include "llm/analysis.h"

#include <doctest.h>

namespace kestrel {
namespace {

constexpr char kAnalysis[] =
    R"({"bottlenecks": [{"name": "scalar loop", "evidence": "packed fp 0%, 1.9 instructions per element"}],
        "recommendations": [{"change": "vectorize the i loop with 8-wide FMAs", "expected_gain": "2x"},
                            {"change": "unroll by 4", "expected_gain": 1.2},
                            {"change": "prefetch x", "expected_gain": "5%"},
                            {"change": "a fourth idea", "expected_gain": "?"}]})";

TEST_CASE("an analysis is read bare, from a fenced block or amid prose, at most three recommendations in rank order") {
  for (const std::string reply : {std::string(kAnalysis), "Here it is:\n```json\n" + std::string(kAnalysis) + "\n```\n",
                                  "My analysis: " + std::string(kAnalysis) + " Hope it helps."}) {
    CAPTURE(reply);
    auto analysis = ParseAnalysis(reply);
    REQUIRE(analysis);
    REQUIRE(analysis->bottlenecks.size() == 1);
    CHECK(analysis->bottlenecks[0].name == "scalar loop");
    CHECK(analysis->bottlenecks[0].evidence == "packed fp 0%, 1.9 instructions per element");
    REQUIRE(analysis->recommendations.size() == 3);
    CHECK(analysis->recommendations[0].change == "vectorize the i loop with 8-wide FMAs");
    CHECK(analysis->recommendations[0].expected_gain == "2x");
    CHECK(analysis->recommendations[1].expected_gain == "1.2");  // a number, as its text
    CHECK(analysis->recommendations[2].change == "prefetch x");
  }
}

TEST_CASE("a reply without JSON or without a recommendation is refused, saying why") {
  const auto refused = [](const std::string& reply) {
    auto analysis = ParseAnalysis(reply);
    REQUIRE_FALSE(analysis);
    return analysis.error().message();
  };
  CHECK(refused("The kernel is memory bound; tile it.").find("not valid JSON") != std::string::npos);
  CHECK(refused(R"({"bottlenecks": []})").find("\"recommendations\"") != std::string::npos);
  CHECK(refused(R"({"recommendations": [{"expected_gain": "2x"}, 3]})").find("\"change\"") != std::string::npos);
  CHECK(refused(R"({"recommendations": "vectorize"})").find("\"recommendations\"") != std::string::npos);
}

TEST_CASE("a followed recommendation is labelled with its rank and its change's first line, cut") {
  CHECK(RecommendationLabel({"tile the k loop\nby 64", "2x"}, 1, 3) == "rec 2/3: tile the k loop");
  const std::string label = RecommendationLabel({std::string(200, 'x'), ""}, 0, 1);
  CHECK(label.size() == std::string("rec 1/1: ").size() + 80);
  CHECK(label.ends_with("..."));
}

}  // namespace
}  // namespace kestrel
