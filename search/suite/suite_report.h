#pragma once
// A suite's report (`kestrel suite report`, docs/SUITE.md): each task's
// result read from its run in the store, and the summaries per level and for
// the whole suite (suite_metrics.h).

#include <cstdint>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/error.h"
#include "search/suite/suite_metrics.h"
#include "store/suite_records.h"

namespace kestrel {

class Store;

struct SuiteReport {
  SuiteRecord suite;
  std::vector<SuiteTaskResult> tasks;   // in the suite's order
  std::vector<SuiteSummary> levels;     // one per level present, ascending
  SuiteSummary total;                   // every task (level 0)
};

// The report of suite `suite_id`; NotFound for an unknown suite.
Result<SuiteReport> BuildSuiteReport(Store& store, std::int64_t suite_id);

// What `kestrel suite report --json` prints: one document.
nlohmann::json ToJson(const SuiteReport& report);

}  // namespace kestrel
