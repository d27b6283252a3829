// Reference bf16 RMSNorm + scale: statistics and scaling in double, rounded
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

static double FromBf16(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

void rmsnorm_bf16(const uint16_t* x, const float* w, uint16_t* y, float alpha, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    double squares = 0.0;
    for (int64_t c = 0; c < cols; ++c) squares += FromBf16(x[r * cols + c]) * FromBf16(x[r * cols + c]);
    const double inv = 1.0 / std::sqrt(squares / static_cast<double>(cols) + 1e-6);
    for (int64_t c = 0; c < cols; ++c) {
      y[r * cols + c] = RoundToBf16(FromBf16(x[r * cols + c]) * inv * w[c] * static_cast<double>(alpha));
    }
  }
}
