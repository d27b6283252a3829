#pragma once
#include <string>
#include <string_view>

namespace kestrel {

// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

}  // namespace kestrel
