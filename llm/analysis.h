#pragma once
// What the analyst answers about a profiled node (issue 18, LLM.md): the
// bottlenecks it sees with their evidence, and up to three recommendations,
// best first, each a change and the gain it expects. Mutations of the node
// follow them ("llm:MODEL:rec 2/3: CHANGE").

#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace kestrel {

struct Bottleneck {
  std::string name;
  std::string evidence;
};

struct Recommendation {
  std::string change;
  std::string expected_gain;
};

struct Analysis {
  std::vector<Bottleneck> bottlenecks;
  std::vector<Recommendation> recommendations;  // ranked, 1 to kMaxRecommendations
};

inline constexpr std::size_t kMaxRecommendations = 3;

// The analysis in a reply: one JSON object, bare, in a fenced block, or
// amid prose, {"bottlenecks": [{"name", "evidence"}], "recommendations":
// [{"change", "expected_gain"}]}. Recommendations past the third are
// dropped. Refuses (InvalidArgument, the message says what is wrong, for the
// call's record) a reply without such an object or without a recommendation.
Result<Analysis> ParseAnalysis(std::string_view reply);

// The mutation label of a node made following recommendation `index` (from
// 0) of `count`: "rec 2/3: tile the k loop" (the change's first line, cut).
std::string RecommendationLabel(const Recommendation& recommendation, std::size_t index, std::size_t count);

}  // namespace kestrel
