// bf16 RMSNorm + scale seed: widen, sum of squares, scale in float, narrow
// with round to nearest even.
//
// kestrel:knob ACC 1 2 4 8 16 32 64 128
// kestrel:knob ACC_DOUBLE 1 0
// kestrel:knob FOLD 0 1
//
// ACC        independent lanes for the sum of squares.
// ACC_DOUBLE 1: sum in double; 0: in float (a 16k-element row stays well within bf16's precision).
// FOLD       1: fold alpha * inv into one float per row before the column loop; 0: multiply each.
#include <cmath>
#include <cstdint>
#include <cstring>

#ifndef ACC
#define ACC 1
#endif
#ifndef ACC_DOUBLE
#define ACC_DOUBLE 1
#endif
#ifndef FOLD
#define FOLD 0
#endif

#if ACC_DOUBLE
using Acc = double;
#else
using Acc = float;
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

void rmsnorm_bf16(const uint16_t* x, const float* w, uint16_t* y, float alpha, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* in = x + r * cols;
    uint16_t* out = y + r * cols;
    Acc lanes[ACC] = {};
    int64_t c = 0;
    for (; c + ACC <= cols; c += ACC) {
      for (int u = 0; u < ACC; ++u) {
        const Acc v = Widen(in[c + u]);
        lanes[u] += v * v;
      }
    }
    for (; c < cols; ++c) {
      const Acc v = Widen(in[c]);
      lanes[0] += v * v;
    }
    Acc squares = 0;
    for (int u = 0; u < ACC; ++u) squares += lanes[u];
    const float inv = static_cast<float>(1.0 / std::sqrt(static_cast<double>(squares) / static_cast<double>(cols) + 1e-6));
#if FOLD
    const float factor = inv * alpha;
    for (int64_t j = 0; j < cols; ++j) out[j] = Narrow(Widen(in[j]) * w[j] * factor);
#else
    for (int64_t j = 0; j < cols; ++j) out[j] = Narrow(Widen(in[j]) * inv * w[j] * alpha);
#endif
  }
}
