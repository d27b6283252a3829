#pragma once
// The review queue of a graph (ReviewThresholds, store/human_records.h) with
// the thresholds of the graph's newest run config ("review"; the defaults
// when the graph has no run or its stored config has none). What `kestrel
// best`, the report and the live page list as awaiting review.

#include <cstdint>
#include <vector>

#include "core/error.h"
#include "store/human_records.h"

namespace kestrel {

class Store;

// The thresholds the graph's newest run was started with.
Result<ReviewThresholds> ReviewThresholdsOf(Store& store, std::int64_t graph_id);
// Store::ReviewQueue with those thresholds.
Result<std::vector<ReviewItem>> AwaitingReview(Store& store, std::int64_t graph_id);

}  // namespace kestrel
