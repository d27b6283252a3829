#include "core/json_text.h"

#include <nlohmann/json.hpp>

namespace kestrel {

std::string JsonText(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace kestrel
