// Broadcast-affine seed.
//
// kestrel:knob FMA 0 1
// kestrel:knob UNROLL 1 2 3 4 5 6 7 8 12 16 24 32 48 64 128
//
// FMA    1: std::fma (one rounding, like the reference); 0: multiply then add in float.
// UNROLL columns per inner step.
#include <cmath>
#include <cstdint>

#ifndef FMA
#define FMA 0
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

static inline float Affine(float x, float s, float t) {
#if FMA
  return std::fma(x, s, t);
#else
  return x * s + t;
#endif
}

void broadcast_affine(const float* x, const float* scale, const float* shift, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float t = shift[r];
    int64_t c = 0;
    for (; c + UNROLL <= cols; c += UNROLL) {
      for (int u = 0; u < UNROLL; ++u) y[r * cols + c + u] = Affine(x[r * cols + c + u], scale[c + u], t);
    }
    for (; c < cols; ++c) y[r * cols + c] = Affine(x[r * cols + c], scale[c], t);
  }
}
