// Softmax seed: three passes over each row (max, sum of exponentials, scale).
//
// kestrel:knob EXP 0 1
// kestrel:knob ACC 1 4 8 16 32
// kestrel:knob ACC_DOUBLE 1 0
// kestrel:knob STORE_EXP 0 1
//
// EXP        0: std::exp; 1: a branch-free Cephes-style polynomial expf
//               (range reduction by ln 2, ~1.5 ulp) that the compiler can vectorize.
// ACC        independent accumulators (lanes) in the max and sum loops.
// ACC_DOUBLE 1: accumulate the sum of exponentials in double; 0: in float.
// STORE_EXP  0: recompute exp in the last pass; 1: store exp(x - max) in y
//               in the second pass and rescale it in the third.
#include <cmath>
#include <cstdint>
#include <cstring>

#ifndef EXP
#define EXP 0
#endif
#ifndef ACC
#define ACC 1
#endif
#ifndef ACC_DOUBLE
#define ACC_DOUBLE 1
#endif
#ifndef STORE_EXP
#define STORE_EXP 0
#endif

namespace {

#if ACC_DOUBLE
using Acc = double;
#else
using Acc = float;
#endif

// exp(x) for x in [-87, 88] (clamped outside, which a softmax never needs
// above 0 and which rounds to a negligible value below -87).
inline float PolyExp(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  const float n = std::nearbyint(x * 1.44269504088896341f);  // vectorizes, unlike floor
  float r = x - n * 0.693359375f;  // ln 2 split in two for an exact reduction
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;  // 2^n
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}

inline float Exp(float x) {
#if EXP
  return PolyExp(x);
#else
  return std::exp(x);
#endif
}

float RowMax(const float* in, int64_t cols) {
  float lanes[ACC];
  for (int u = 0; u < ACC; ++u) lanes[u] = in[0];
  int64_t c = 0;
  for (; c + ACC <= cols; c += ACC) {
    for (int u = 0; u < ACC; ++u) lanes[u] = in[c + u] > lanes[u] ? in[c + u] : lanes[u];
  }
  for (; c < cols; ++c) lanes[0] = in[c] > lanes[0] ? in[c] : lanes[0];
  float max = lanes[0];
  for (int u = 1; u < ACC; ++u) max = lanes[u] > max ? lanes[u] : max;
  return max;
}

// Sum of exp(in[c] - max); with STORE_EXP, also writes each term to out.
Acc SumExp(const float* in, float* out, int64_t cols, float max) {
  Acc lanes[ACC];
  for (int u = 0; u < ACC; ++u) lanes[u] = 0;
  int64_t c = 0;
  for (; c + ACC <= cols; c += ACC) {
    for (int u = 0; u < ACC; ++u) {
      const float e = Exp(in[c + u] - max);
#if STORE_EXP
      out[c + u] = e;
#endif
      lanes[u] += e;
    }
  }
  for (; c < cols; ++c) {
    const float e = Exp(in[c] - max);
#if STORE_EXP
    out[c] = e;
#endif
    lanes[0] += e;
  }
  (void)out;
  Acc sum = 0;
  for (int u = 0; u < ACC; ++u) sum += lanes[u];
  return sum;
}

}  // namespace

void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * cols;
    float* out = y + r * cols;
    const float max = RowMax(in, cols);
    const float inv = static_cast<float>(Acc(1) / SumExp(in, out, cols, max));
    for (int64_t c = 0; c < cols; ++c) {
#if STORE_EXP
      out[c] *= inv;
#else
      out[c] = Exp(in[c] - max) * inv;
#endif
    }
  }
}
