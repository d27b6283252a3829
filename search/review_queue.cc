#include "search/review_queue.h"

#include <nlohmann/json.hpp>

#include "core/json_fields.h"
#include "search/run_config.h"
#include "store/store.h"

namespace kestrel {

Result<ReviewThresholds> ReviewThresholdsOf(Store& store, std::int64_t graph_id) {
  auto runs = store.ListRuns();
  if (!runs) return Fail(runs.error());
  for (const RunRecord& run : *runs) {  // newest first
    if (run.graph_id != graph_id) continue;
    const std::string origin = "run " + std::to_string(run.id) + "'s config";
    auto document = ParseJsonDocument(run.config_json, origin);
    if (!document) return Fail(document.error());
    // Only its review section: the rest of an older run's config is not this build's business here.
    if (!document->is_object() || !document->contains("review")) return ReviewThresholds{};
    auto config = ParseRunConfig(nlohmann::json{{"review", document->at("review")}}, origin);
    if (!config) return Fail(config.error());
    return config->review;
  }
  return ReviewThresholds{};
}

Result<std::vector<ReviewItem>> AwaitingReview(Store& store, std::int64_t graph_id) {
  auto thresholds = ReviewThresholdsOf(store, graph_id);
  if (!thresholds) return Fail(thresholds.error());
  return store.ReviewQueue(graph_id, *thresholds);
}

}  // namespace kestrel
