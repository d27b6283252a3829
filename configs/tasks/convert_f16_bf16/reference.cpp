// Reference f16 -> bf16 conversion: the product in double (exact), rounded
// once to bfloat16 (8 significant bits, nearest even, subnormals kept).
#include <cmath>
#include <cstdint>
#include <cstring>

static uint16_t RoundToBf16(double v) {
  if (std::isnan(v)) return 0x7fc0;
  if (std::isfinite(v) && std::fabs(v) >= 0x1p-126) {
    // A normal bf16 keeps the double's top 7 fraction bits: round the 45
    // below them to nearest even on the bits (a carry moves the exponent).
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    bits += (uint64_t{1} << 44) - 1 + ((bits >> 45) & 1);
    bits &= ~((uint64_t{1} << 45) - 1);
    std::memcpy(&v, &bits, sizeof v);
  } else if (std::isfinite(v) && v != 0) {
    v = std::ldexp(std::nearbyint(std::ldexp(v, 133)), -133);  // a subnormal: multiples of 2^-133
  }
  const float f = static_cast<float>(v);  // exact, or infinity past bf16's range
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return static_cast<uint16_t>(bits >> 16);
}

void convert_f16_bf16(const _Float16* x, uint16_t* y, float scale, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = RoundToBf16(static_cast<double>(x[i]) * static_cast<double>(scale));
}
