// bf16 GELU seed: widen to float, GELU in float, narrow with round to nearest even.
//
// kestrel:knob ERF 0 1
// kestrel:knob UNROLL 1 2 3 4 5 6 7 8 12 16 24 32 48 64 128
//
// ERF    0: std::erf in double; 1: std::erf in float (erff).
// UNROLL elements per inner step.
#include <cmath>
#include <cstdint>
#include <cstring>

#ifndef ERF
#define ERF 0
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

static inline float Widen(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

static inline uint16_t Narrow(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);  // quiet NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

static inline float Gelu(float v) {
#if ERF
  return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f));
#else
  return static_cast<float>(0.5 * v * (1.0 + std::erf(v * 0.70710678118654752)));
#endif
}

void gelu_bf16(const uint16_t* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + UNROLL <= n; i += UNROLL) {
    for (int u = 0; u < UNROLL; ++u) y[i + u] = Narrow(Gelu(Widen(x[i + u])));
  }
  for (; i < n; ++i) y[i] = Narrow(Gelu(Widen(x[i])));
}
