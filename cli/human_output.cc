#include "cli/human_output.h"

#include <fmt/format.h>

#include "cli/output.h"

namespace kestrel::cli {

nlohmann::json ToJson(const HumanActionRecord& action) {
  const auto id_or_null = [](std::int64_t id) { return id != 0 ? nlohmann::json(id) : nlohmann::json(); };
  return {{"id", action.id},
          {"kind", ToString(action.kind)},
          {"text", action.text},
          {"author", action.author},
          {"at", FormatTimestamp(action.created_at)},
          {"node", id_or_null(action.node_id)},
          {"run", id_or_null(action.run_id)}};
}

std::string FormatAction(const HumanActionRecord& action) {
  return fmt::format("{}  {}  {}{}", FormatTimestamp(action.created_at), action.author, ToString(action.kind),
                     action.text.empty() ? "" : ": " + action.text);
}

nlohmann::json ToJson(const ReviewItem& item) {
  return {{"node", item.node_id},
          {"speedup", item.speedup},
          {"previous_best", item.previous_best > 0 ? nlohmann::json(item.previous_best) : nlohmann::json()},
          {"roofline_fraction", item.roofline_fraction},
          {"reason", item.reason}};
}

}  // namespace kestrel::cli
