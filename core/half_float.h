#pragma once
// The 16-bit floating-point types of a task's buffers (ScalarType f16 and
// bf16): IEEE binary16 (5 exponent bits, 10 fraction bits) and bfloat16 (8
// and 7, float32's range). The harness draws inputs in double and stores
// them with these, and reads outputs back with them to compare in double.
// Conversions round to nearest, ties to even (what the hardware's
// conversions do), keep subnormals, overflow to infinity and keep NaN a
// (quiet) NaN. The kernel sees raw 16-bit elements: `_Float16` for f16,
// `uint16_t` holding the bits for bf16 (GCC 12 has no bf16 arithmetic type).

#include <algorithm>
#include <bit>
#include <cstdint>

namespace kestrel {

namespace half_float_detail {

// A binary format of 1 sign bit, `exponent_bits`, `fraction_bits`, IEEE
// style (bias 2^(e-1) - 1, subnormals, all-ones exponent for Inf and NaN).
struct Format {
  int exponent_bits;
  int fraction_bits;
  constexpr int Bias() const { return (1 << (exponent_bits - 1)) - 1; }
  constexpr std::uint16_t ExponentMask() const {
    return static_cast<std::uint16_t>(((1 << exponent_bits) - 1) << fraction_bits);
  }
};

// One rounding of the double's own bits: its significand (with the
// implicit 1) shifted right by the bits the format drops, to nearest, ties
// to even. A carry out of the fraction moves to the next binade (or from
// the largest subnormal to the smallest normal, whose encoding it is), and
// past the largest finite value to infinity. Integer operations only: a
// runner encodes every element of a task's 16-bit inputs with it.
// (The format a template argument: its shifts and masks constants.)
template <Format format>
std::uint16_t Encode(double value) {
  const auto bits = std::bit_cast<std::uint64_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 48) & 0x8000);
  const std::uint16_t infinity = format.ExponentMask();
  const std::uint64_t magnitude = bits & 0x7FFF'FFFF'FFFF'FFFFULL;
  constexpr std::uint64_t kDoubleInfinity = 0x7FF0'0000'0000'0000ULL;
  if (magnitude > kDoubleInfinity) return static_cast<std::uint16_t>(sign | infinity | (1u << (format.fraction_bits - 1)));
  if (magnitude == kDoubleInfinity) return static_cast<std::uint16_t>(sign | infinity);
  const int biased_double = static_cast<int>(magnitude >> 52);
  // A double subnormal (or zero) is far below half the smallest subnormal of either format.
  if (biased_double == 0) return sign;
  const int exponent = biased_double - 1023;  // magnitude = 1.f * 2^exponent
  const std::uint64_t significand = (magnitude & 0x000F'FFFF'FFFF'FFFFULL) | (1ULL << 52);
  const int min_exponent = 1 - format.Bias();  // of the smallest normal
  // Bits dropped: those below the format's fraction, and for a subnormal
  // the ones its exponent cannot hold.
  const int shift = 52 - format.fraction_bits + std::max(0, min_exponent - exponent);
  if (shift >= 54) return sign;  // under half the smallest subnormal: rounds to zero
  std::uint64_t units = significand >> shift;
  const std::uint64_t rest = significand & ((1ULL << shift) - 1);
  const std::uint64_t half = 1ULL << (shift - 1);
  // Without a branch: random inputs would mispredict half of them.
  units += static_cast<std::uint64_t>(rest > half) | (static_cast<std::uint64_t>(rest == half) & units);
  if (exponent < min_exponent) return static_cast<std::uint16_t>(sign | units);  // subnormal, or the smallest normal
  int biased = exponent + format.Bias();
  if (units == (2ULL << format.fraction_bits)) {  // rounded up to the next binade
    units >>= 1;
    ++biased;
  }
  if (biased >= (1 << format.exponent_bits) - 1) return static_cast<std::uint16_t>(sign | infinity);
  return static_cast<std::uint16_t>(sign | (biased << format.fraction_bits) | (units - (1ULL << format.fraction_bits)));
}

// 2^exponent, for the exponents of the formats' subnormals.
constexpr double Weight(int exponent) {
  double weight = 1.0;
  for (; exponent < 0; ++exponent) weight *= 0.5;
  return weight;
}

// Exact: every 16-bit value is a double. A normal's fields move into the
// double's (its exponent rebiased); a subnormal is its fraction times the
// smallest subnormal's weight.
template <Format format>
double Decode(std::uint16_t bits) {
  const std::uint64_t sign = static_cast<std::uint64_t>(bits & 0x8000) << 48;
  const int biased = (bits & format.ExponentMask()) >> format.fraction_bits;
  const std::uint64_t fraction = bits & ((1u << format.fraction_bits) - 1);
  if (biased == (1 << format.exponent_bits) - 1) {  // infinity, or a NaN (quiet, its payload kept)
    return std::bit_cast<double>(sign | 0x7FF0'0000'0000'0000ULL | (fraction << (52 - format.fraction_bits)) |
                                 (fraction != 0 ? 0x0008'0000'0000'0000ULL : 0));
  }
  if (biased == 0) {
    constexpr double kWeight = Weight(1 - format.Bias() - format.fraction_bits);
    const double magnitude = static_cast<double>(fraction) * kWeight;
    return sign != 0 ? -magnitude : magnitude;
  }
  const auto exponent = static_cast<std::uint64_t>(biased - format.Bias() + 1023);
  return std::bit_cast<double>(sign | (exponent << 52) | (fraction << (52 - format.fraction_bits)));
}

inline constexpr Format kF16{5, 10};
inline constexpr Format kBf16{8, 7};

}  // namespace half_float_detail

// Inline: a runner converts every element of a task's 16-bit buffers.
inline std::uint16_t ToF16Bits(double value) { return half_float_detail::Encode<half_float_detail::kF16>(value); }
inline double FromF16Bits(std::uint16_t bits) { return half_float_detail::Decode<half_float_detail::kF16>(bits); }
inline std::uint16_t ToBf16Bits(double value) { return half_float_detail::Encode<half_float_detail::kBf16>(value); }
inline double FromBf16Bits(std::uint16_t bits) { return half_float_detail::Decode<half_float_detail::kBf16>(bits); }

}  // namespace kestrel
