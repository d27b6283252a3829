#include "core/scalar_type.h"

namespace kestrel {

std::string_view ToString(ScalarType type) {
  for (std::size_t i = 0; i < kScalarTypes.size(); ++i) {
    if (kScalarTypes[i] == type) return kScalarTypeNames[i];
  }
  return "?";
}

std::optional<ScalarType> ParseScalarType(std::string_view name) {
  for (std::size_t i = 0; i < kScalarTypes.size(); ++i) {
    if (kScalarTypeNames[i] == name) return kScalarTypes[i];
  }
  return std::nullopt;
}

std::string_view CppType(ScalarType type) {
  switch (type) {
    case ScalarType::kF32: return "float";
    case ScalarType::kF64: return "double";
    case ScalarType::kI8: return "int8_t";
    case ScalarType::kU8: return "uint8_t";
    case ScalarType::kI32: return "int32_t";
    case ScalarType::kI64: return "int64_t";
    case ScalarType::kF16: return "_Float16";
    case ScalarType::kBF16: return "uint16_t";
  }
  return "?";
}

std::size_t SizeOf(ScalarType type) {
  switch (type) {
    case ScalarType::kF32: return 4;
    case ScalarType::kF64: return 8;
    case ScalarType::kI8: return 1;
    case ScalarType::kU8: return 1;
    case ScalarType::kI32: return 4;
    case ScalarType::kI64: return 8;
    case ScalarType::kF16:
    case ScalarType::kBF16: return 2;
  }
  return 0;
}

bool IsFloating(ScalarType type) {
  return type == ScalarType::kF32 || type == ScalarType::kF64 || type == ScalarType::kF16 || type == ScalarType::kBF16;
}

}  // namespace kestrel
