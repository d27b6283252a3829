#include "core/half_float.h"

#include <algorithm>
#include <cmath>

namespace kestrel {
namespace {

// A binary format of 1 sign bit, `exponent_bits`, `fraction_bits`, IEEE
// style (bias 2^(e-1) - 1, subnormals, all-ones exponent for Inf and NaN).
struct Format {
  int exponent_bits;
  int fraction_bits;
  int Bias() const { return (1 << (exponent_bits - 1)) - 1; }
  std::uint16_t ExponentMask() const { return static_cast<std::uint16_t>(((1 << exponent_bits) - 1) << fraction_bits); }
};

constexpr Format kF16{5, 10};
constexpr Format kBf16{8, 7};

std::uint16_t Encode(double value, const Format& format) {
  const std::uint16_t sign = std::signbit(value) ? static_cast<std::uint16_t>(0x8000) : 0;
  const std::uint16_t infinity = format.ExponentMask();
  if (std::isnan(value)) return static_cast<std::uint16_t>(sign | infinity | (1u << (format.fraction_bits - 1)));
  const double magnitude = std::fabs(value);
  if (std::isinf(magnitude)) return static_cast<std::uint16_t>(sign | infinity);
  if (magnitude == 0) return sign;
  const int min_exponent = 1 - format.Bias();  // of the smallest normal
  int exponent = 0;
  (void)std::frexp(magnitude, &exponent);  // magnitude = m * 2^exponent, m in [0.5, 1)
  --exponent;                              // magnitude = s * 2^exponent, s in [1, 2)
  // Scaled so that one unit in the last place is 1: exact in a double, so
  // nearbyint (round half to even) is the one rounding.
  const int scale_exponent = std::max(exponent, min_exponent) - format.fraction_bits;
  const double units = std::nearbyint(std::ldexp(magnitude, -scale_exponent));
  // units counts ulps of 2^scale_exponent; for a normal it includes the
  // implicit leading 1 (2^fraction_bits), and a carry may make it 2^(f+1).
  std::uint32_t fraction = static_cast<std::uint32_t>(units);
  if (exponent < min_exponent) {
    // Subnormal (or rounded up to the smallest normal: fraction == 2^f,
    // which is exactly that encoding).
    return static_cast<std::uint16_t>(sign | fraction);
  }
  int biased = exponent + format.Bias();
  if (fraction >= (2u << format.fraction_bits)) {  // rounded up to the next binade
    fraction >>= 1;
    ++biased;
  }
  if (biased >= (1 << format.exponent_bits) - 1) return static_cast<std::uint16_t>(sign | infinity);
  fraction -= 1u << format.fraction_bits;  // the implicit leading 1
  return static_cast<std::uint16_t>(sign | (biased << format.fraction_bits) | fraction);
}

double Decode(std::uint16_t bits, const Format& format) {
  const bool negative = (bits & 0x8000) != 0;
  const int biased = (bits & format.ExponentMask()) >> format.fraction_bits;
  const std::uint32_t fraction = bits & ((1u << format.fraction_bits) - 1);
  double magnitude = 0;
  if (biased == (1 << format.exponent_bits) - 1) {
    magnitude = fraction == 0 ? INFINITY : NAN;
  } else if (biased == 0) {
    magnitude = std::ldexp(static_cast<double>(fraction), 1 - format.Bias() - format.fraction_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(fraction | (1u << format.fraction_bits)),
                           biased - format.Bias() - format.fraction_bits);
  }
  return negative ? -magnitude : magnitude;
}

}  // namespace

std::uint16_t ToF16Bits(double value) { return Encode(value, kF16); }
double FromF16Bits(std::uint16_t bits) { return Decode(bits, kF16); }
std::uint16_t ToBf16Bits(double value) { return Encode(value, kBf16); }
double FromBf16Bits(std::uint16_t bits) { return Decode(bits, kBf16); }

}  // namespace kestrel
