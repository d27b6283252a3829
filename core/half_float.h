#pragma once
// The 16-bit floating-point types of a task's buffers (ScalarType f16 and
// bf16): IEEE binary16 (5 exponent bits, 10 fraction bits) and bfloat16 (8
// and 7, float32's range). The harness draws inputs in double and stores
// them with these, and reads outputs back with them to compare in double.
// Conversions round to nearest, ties to even (what the hardware's
// conversions do), keep subnormals, overflow to infinity and keep NaN a
// (quiet) NaN. The kernel sees raw 16-bit elements: `_Float16` for f16,
// `uint16_t` holding the bits for bf16 (GCC 12 has no bf16 arithmetic type).

#include <cstdint>

namespace kestrel {

std::uint16_t ToF16Bits(double value);
double FromF16Bits(std::uint16_t bits);
std::uint16_t ToBf16Bits(double value);
double FromBf16Bits(std::uint16_t bits);

}  // namespace kestrel
