// Reference f16 -> bf16 conversion: the product in double (exact), rounded
// once to bfloat16 (8 significant bits, nearest even, subnormals kept).
#include <cmath>
#include <cstdint>
#include <cstring>

static uint16_t RoundToBf16(double v) {
  if (std::isnan(v)) return 0x7fc0;
  if (v != 0 && std::isfinite(v)) {
    int e;
    std::frexp(v, &e);
    const int quantum = e - 8 > -133 ? e - 8 : -133;
    v = std::ldexp(std::nearbyint(std::ldexp(v, -quantum)), quantum);
  }
  const float f = static_cast<float>(v);  // exact, or infinity past bf16's range
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return static_cast<uint16_t>(bits >> 16);
}

void convert_f16_bf16(const _Float16* x, uint16_t* y, float scale, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = RoundToBf16(static_cast<double>(x[i]) * static_cast<double>(scale));
}
