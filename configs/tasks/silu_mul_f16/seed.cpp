// SwiGLU gate seed on f16: widen to float, silu(g) * u in float, narrow
// (the compiler's float -> _Float16 conversion rounds to nearest even).
//
// kestrel:knob EXP 0 1
// kestrel:knob UNROLL 1 2 3 4 5 6 7 8 12 16 24 32 48 64 128
//
// EXP    0: std::exp in float; 1: a branch-free polynomial expf that vectorizes.
// UNROLL elements per inner step.
#include <cmath>
#include <cstdint>
#include <cstring>

#ifndef EXP
#define EXP 0
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

static inline float PolyExp(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  const float n = std::nearbyint(x * 1.44269504088896341f);
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}

static inline _Float16 Gate(_Float16 g, _Float16 u) {
  const float v = static_cast<float>(g);
#if EXP
  const float e = PolyExp(-v);
#else
  const float e = std::exp(-v);
#endif
  return static_cast<_Float16>(v / (1.0f + e) * static_cast<float>(u));
}

void silu_mul_f16(const _Float16* g, const _Float16* u, _Float16* y, int64_t rows, int64_t cols) {
  const int64_t total = rows * cols;
  int64_t e = 0;
  for (; e + UNROLL <= total; e += UNROLL) {
    for (int q = 0; q < UNROLL; ++q) y[e + q] = Gate(g[e + q], u[e + q]);
  }
  for (; e < total; ++e) y[e] = Gate(g[e], u[e]);
}
