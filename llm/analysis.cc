#include "llm/analysis.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "llm/code_block.h"

namespace kestrel {
namespace {

using nlohmann::json;

// The reply's JSON object: the whole reply, its last fenced block, or the
// text from its first '{' to its last '}'.
std::optional<json> FindObject(std::string_view reply) {
  std::vector<std::string> candidates{std::string(reply)};
  if (auto block = ExtractCode(reply, "")) candidates.push_back(*block);
  const std::size_t open = reply.find('{');
  const std::size_t close = reply.rfind('}');
  if (open != std::string_view::npos && close != std::string_view::npos && close > open) {
    candidates.emplace_back(reply.substr(open, close - open + 1));
  }
  for (const std::string& text : candidates) {
    json document = json::parse(text, nullptr, false);
    if (!document.is_discarded() && document.is_object()) return document;
  }
  return std::nullopt;
}

// A text field; a number (an expected gain of 1.5) is taken as its text.
std::string Text(const json& object, const char* key) {
  const auto found = object.find(key);
  if (found == object.end() || found->is_null()) return {};
  if (found->is_string()) return found->get<std::string>();
  return found->dump();
}

}  // namespace

Result<Analysis> ParseAnalysis(std::string_view reply) {
  const auto document = FindObject(reply);
  if (!document) return Fail(Error::InvalidArgument("the analysis is not valid JSON (no JSON object in the reply)"));
  Analysis analysis;
  if (const auto bottlenecks = document->find("bottlenecks");
      bottlenecks != document->end() && bottlenecks->is_array()) {
    for (const json& item : *bottlenecks) {
      if (item.is_object()) analysis.bottlenecks.push_back({Text(item, "name"), Text(item, "evidence")});
    }
  }
  const auto recommendations = document->find("recommendations");
  if (recommendations == document->end() || !recommendations->is_array()) {
    return Fail(Error::InvalidArgument("the analysis has no \"recommendations\" array"));
  }
  for (const json& item : *recommendations) {
    if (!item.is_object()) continue;
    Recommendation recommendation{Text(item, "change"), Text(item, "expected_gain")};
    if (recommendation.change.empty()) continue;
    analysis.recommendations.push_back(std::move(recommendation));
    if (analysis.recommendations.size() == kMaxRecommendations) break;
  }
  if (analysis.recommendations.empty()) {
    return Fail(Error::InvalidArgument("the analysis has no recommendation with a \"change\""));
  }
  return analysis;
}

std::string RecommendationLabel(const Recommendation& recommendation, std::size_t index, std::size_t count) {
  std::string change = recommendation.change.substr(0, recommendation.change.find('\n'));
  if (change.size() > 80) change = change.substr(0, 77) + "...";
  return fmt::format("rec {}/{}: {}", index + 1, count, change);
}

}  // namespace kestrel
