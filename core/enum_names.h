#pragma once
// The words of a vocabulary: one table of (value, word) pairs per enum whose
// words appear in output and in the database (NodeStatus, EdgeKind,
// RunStatus, ...), read both ways.

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace kestrel {

template <class Enum, std::size_t N>
using EnumNames = std::array<std::pair<Enum, std::string_view>, N>;

// The word of `value`; "unknown" for a value missing from the table.
template <class Enum, std::size_t N>
constexpr std::string_view NameOf(const EnumNames<Enum, N>& names, Enum value) {
  for (const auto& [known, name] : names) {
    if (known == value) return name;
  }
  return "unknown";
}

// The value whose word is `text`, if any.
template <class Enum, std::size_t N>
constexpr std::optional<Enum> ValueOf(const EnumNames<Enum, N>& names, std::string_view text) {
  for (const auto& [value, name] : names) {
    if (name == text) return value;
  }
  return std::nullopt;
}

}  // namespace kestrel
