// Fused bias + GELU seed: y = 0.5 * v * (1 + erf(v / sqrt(2))), v = x + bias.
//
// kestrel:knob ERF 0 1 2 3
// kestrel:knob UNROLL 1 2 4 8
// kestrel:knob PASSES 1 2
//
// ERF    0: std::erf in double (like the reference);
//        1: std::erf in float;
//        2: Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7) with std::exp;
//        3: the same with a branch-free polynomial exp that vectorizes.
// UNROLL elements per iteration of the inner loop.
// PASSES 1: bias add and GELU in one pass; 2: y = x + bias first, then GELU in place.
#include <cmath>
#include <cstdint>
#include <cstring>

#ifndef ERF
#define ERF 0
#endif
#ifndef UNROLL
#define UNROLL 1
#endif
#ifndef PASSES
#define PASSES 1
#endif

namespace {

// exp(x) for x <= 0 (clamped below at -87, where it is negligible here).
inline float PolyExp(float x) {
  x = x < -87.0f ? -87.0f : x;
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

inline float Gelu(float v) {
#if ERF == 0
  const double d = v;
  return static_cast<float>(0.5 * d * (1.0 + std::erf(d * 0.70710678118654752)));
#elif ERF == 1
  return 0.5f * v * (1.0f + std::erf(v * 0.70710678f));
#else
  // erf(z) = 1 - t*(a1 + t*(a2 + ...)) * exp(-z^2), t = 1 / (1 + p*z), z >= 0.
  const float z = std::fabs(v) * 0.70710678f;
  const float t = 1.0f / (1.0f + 0.3275911f * z);
  const float poly = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
#if ERF == 2
  const float e = std::exp(-z * z);
#else
  const float e = PolyExp(-z * z);
#endif
  const float erf_abs = 1.0f - poly * e;
  const float erf = v < 0.0f ? -erf_abs : erf_abs;
  return 0.5f * v * (1.0f + erf);
#endif
}

}  // namespace

void bias_gelu(const float* x, const float* bias, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * cols;
    float* out = y + r * cols;
#if PASSES == 1
    int64_t c = 0;
    for (; c + UNROLL <= cols; c += UNROLL) {
      for (int u = 0; u < UNROLL; ++u) out[c + u] = Gelu(in[c + u] + bias[c + u]);
    }
    for (; c < cols; ++c) out[c] = Gelu(in[c] + bias[c]);
#else
    for (int64_t c = 0; c < cols; ++c) out[c] = in[c] + bias[c];
    int64_t c = 0;
    for (; c + UNROLL <= cols; c += UNROLL) {
      for (int u = 0; u < UNROLL; ++u) out[c + u] = Gelu(out[c + u]);
    }
    for (; c < cols; ++c) out[c] = Gelu(out[c]);
#endif
  }
}
