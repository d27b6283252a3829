// Gated MLP seed: per token, the gate and up rows in float (widening each
// bf16 weight where it is used), the gate applied, then the down projection
// accumulated onto a copy of x.
//
// kestrel:knob WIDEN 0 1
// kestrel:knob TOKENS 1 2 3 4 5 6 7 8 10 12 16 20 24 32 64
//
// WIDEN  0: widen weights where they are used; 1: widen all three matrices into
//           float copies first.
// TOKENS tokens per pass over the weights (each weight row is loaded once for them).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#ifndef WIDEN
#define WIDEN 0
#endif
#ifndef TOKENS
#define TOKENS 1
#endif

static inline float Widen(uint16_t v) {
  const uint32_t bits = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
static inline float Widen(float v) { return v; }

template <typename W>
static void Block(const float* x, const W* w1, const W* w3, const W* w2, float* y, int64_t t, int64_t d, int64_t h) {
  std::vector<float> g(static_cast<size_t>(TOKENS * h)), u(g.size());
  for (int64_t i0 = 0; i0 < t; i0 += TOKENS) {
    const int64_t count = i0 + TOKENS <= t ? TOKENS : t - i0;
    for (auto& v : g) v = 0.0f;
    for (auto& v : u) v = 0.0f;
    for (int64_t p = 0; p < d; ++p) {
      for (int64_t q = 0; q < count; ++q) {
        const float xv = x[(i0 + q) * d + p];
        float* gq = g.data() + q * h;
        float* uq = u.data() + q * h;
        for (int64_t j = 0; j < h; ++j) {
          gq[j] += xv * Widen(w1[p * h + j]);
          uq[j] += xv * Widen(w3[p * h + j]);
        }
      }
    }
    for (int64_t e = 0; e < count * h; ++e) {
      const float gv = g[static_cast<size_t>(e)];
      g[static_cast<size_t>(e)] = gv / (1.0f + std::exp(-gv)) * u[static_cast<size_t>(e)];
    }
    for (int64_t q = 0; q < count; ++q) {
      for (int64_t c = 0; c < d; ++c) y[(i0 + q) * d + c] = x[(i0 + q) * d + c];
    }
    for (int64_t j = 0; j < h; ++j) {
      for (int64_t q = 0; q < count; ++q) {
        const float a = g[static_cast<size_t>(q * h + j)];
        float* out = y + (i0 + q) * d;
        for (int64_t c = 0; c < d; ++c) out[c] += a * Widen(w2[j * d + c]);
      }
    }
  }
}

void swiglu_mlp_bf16(const float* x, const uint16_t* w1, const uint16_t* w3, const uint16_t* w2, float* y, int64_t t,
                     int64_t d, int64_t h) {
#if WIDEN
  std::vector<float> f1(static_cast<size_t>(d * h)), f3(f1.size()), f2(f1.size());
  for (size_t e = 0; e < f1.size(); ++e) f1[e] = Widen(w1[e]), f3[e] = Widen(w3[e]), f2[e] = Widen(w2[e]);
  Block(x, f1.data(), f3.data(), f2.data(), y, t, d, h);
#else
  Block(x, w1, w3, w2, y, t, d, h);
#endif
}
