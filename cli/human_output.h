#pragma once
// Printing a person's actions and the review queue (show, best).

#include <string>

#include <nlohmann/json.hpp>

#include "store/human_records.h"

namespace kestrel::cli {

// {"id", "kind", "text", "author", "at", "node", "run"} (node / run null when none).
nlohmann::json ToJson(const HumanActionRecord& action);
// "2026-12-04 18:40:02  ada  note: looks memory bound"
std::string FormatAction(const HumanActionRecord& action);
// {"node", "speedup", "previous_best", "roofline_fraction", "reason"}
nlohmann::json ToJson(const ReviewItem& item);

}  // namespace kestrel::cli
