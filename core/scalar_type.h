#pragma once
// The element type of a task's argument and what follows from it alone:
// its name (in task.json and in jobs), its C++ type, its size. The one
// place that spells these out; everything else asks here.

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace kestrel {

// f16 and bf16 are 16-bit floats (core/half_float.h): buffers only, seen by
// a kernel as `_Float16` and as `uint16_t` bits.
enum class ScalarType { kF32, kF64, kI8, kU8, kI32, kI64, kF16, kBF16 };

inline constexpr std::array<ScalarType, 8> kScalarTypes = {ScalarType::kF32, ScalarType::kF64, ScalarType::kI8,
                                                           ScalarType::kU8,  ScalarType::kI32, ScalarType::kI64,
                                                           ScalarType::kF16, ScalarType::kBF16};
// kScalarTypes' names, in the same order.
inline constexpr std::array<std::string_view, 8> kScalarTypeNames = {"f32", "f64", "i8", "u8", "i32", "i64", "f16", "bf16"};

std::string_view ToString(ScalarType type);                       // "f32"
std::optional<ScalarType> ParseScalarType(std::string_view name);  // "f32" -> kF32; nullopt for another name
std::string_view CppType(ScalarType type);                        // "float"
std::size_t SizeOf(ScalarType type);                              // bytes of one element
bool IsFloating(ScalarType type);                                 // f32, f64, f16, bf16

}  // namespace kestrel
