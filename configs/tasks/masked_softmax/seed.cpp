// Masked softmax seed: a masked entry becomes -infinity, whose exp is 0.
//
// kestrel:knob EXP 0 1
// kestrel:knob ACC 1 2 4 8 16 32 64 128
// kestrel:knob STORE_EXP 0 1
//
// EXP       0: std::exp; 1: a branch-free polynomial expf (vectorizes; -inf clamps to a tiny value, masked to 0).
// ACC       independent lanes in the max and sum loops.
// STORE_EXP 1: store the exponentials in y in the sum pass and rescale them.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#ifndef EXP
#define EXP 0
#endif
#ifndef ACC
#define ACC 1
#endif
#ifndef STORE_EXP
#define STORE_EXP 0
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

// exp(s - max) of a kept entry, 0 for a masked one.
static inline float Term(float s, uint8_t keep, float max) {
#if EXP
  return keep ? PolyExp(s - max) : 0.0f;
#else
  return keep ? std::exp(s - max) : 0.0f;
#endif
}

void masked_softmax(const float* x, const uint8_t* mask, float* y, float scale, int64_t rows, int64_t cols) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * cols;
    const uint8_t* keep = mask + r * cols;
    float* out = y + r * cols;
    float lanes[ACC];
    for (int u = 0; u < ACC; ++u) lanes[u] = neg_inf;
    int64_t c = 0;
    for (; c + ACC <= cols; c += ACC) {
      for (int u = 0; u < ACC; ++u) {
        const float s = keep[c + u] ? in[c + u] * scale : neg_inf;
        lanes[u] = s > lanes[u] ? s : lanes[u];
      }
    }
    for (; c < cols; ++c) {
      const float s = keep[c] ? in[c] * scale : neg_inf;
      lanes[0] = s > lanes[0] ? s : lanes[0];
    }
    float max = lanes[0];
    for (int u = 1; u < ACC; ++u) max = lanes[u] > max ? lanes[u] : max;
    if (max == neg_inf) {
      for (int64_t j = 0; j < cols; ++j) out[j] = 0.0f;
      continue;
    }
    double sums[ACC] = {};
    for (c = 0; c + ACC <= cols; c += ACC) {
      for (int u = 0; u < ACC; ++u) {
        const float e = Term(in[c + u] * scale, keep[c + u], max);
#if STORE_EXP
        out[c + u] = e;
#endif
        sums[u] += e;
      }
    }
    for (; c < cols; ++c) {
      const float e = Term(in[c] * scale, keep[c], max);
#if STORE_EXP
      out[c] = e;
#endif
      sums[0] += e;
    }
    double sum = 0;
    for (int u = 0; u < ACC; ++u) sum += sums[u];
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t j = 0; j < cols; ++j) {
#if STORE_EXP
      out[j] *= inv;
#else
      out[j] = Term(in[j] * scale, keep[j], max) * inv;
#endif
    }
  }
}
