// Residual add + layernorm seed: the sum h = x + res is formed in float
// (as a framework's separate add would store it), then normalized.
//
// kestrel:knob STORE_H 1 0
// kestrel:knob STATS 0 1
// kestrel:knob ACC 1 2 4 8 12 16 32 64
//
// STORE_H 1: write h into y first and normalize y in place; 0: recompute x + res in each pass.
// STATS   0: two passes (mean, then squared deviations) in double; 1: sum and sum of
//            squares of (h - h[0]) in one pass, in double (shifted for stability).
// ACC     independent accumulator lanes.
#include <cmath>
#include <cstdint>

#ifndef STORE_H
#define STORE_H 1
#endif
#ifndef STATS
#define STATS 0
#endif
#ifndef ACC
#define ACC 1
#endif

void add_layernorm(const float* x, const float* res, const float* gamma, const float* beta, float* y, int64_t rows,
                   int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* a = x + r * cols;
    const float* b = res + r * cols;
    float* out = y + r * cols;
#if STORE_H
    for (int64_t c = 0; c < cols; ++c) out[c] = a[c] + b[c];
#define H(c) out[c]
#else
#define H(c) (a[c] + b[c])
#endif
    double mean, var;
#if STATS == 0
    double lanes[ACC] = {};
    int64_t c = 0;
    for (; c + ACC <= cols; c += ACC) {
      for (int u = 0; u < ACC; ++u) lanes[u] += H(c + u);
    }
    for (; c < cols; ++c) lanes[0] += H(c);
    double sum = 0;
    for (int u = 0; u < ACC; ++u) sum += lanes[u], lanes[u] = 0;
    mean = sum / static_cast<double>(cols);
    for (c = 0; c + ACC <= cols; c += ACC) {
      for (int u = 0; u < ACC; ++u) {
        const double d = H(c + u) - mean;
        lanes[u] += d * d;
      }
    }
    for (; c < cols; ++c) lanes[0] += (H(c) - mean) * (H(c) - mean);
    double squares = 0;
    for (int u = 0; u < ACC; ++u) squares += lanes[u];
    var = squares / static_cast<double>(cols);
#else
    const double shift = H(0);
    double s1[ACC] = {}, s2[ACC] = {};
    int64_t c = 0;
    for (; c + ACC <= cols; c += ACC) {
      for (int u = 0; u < ACC; ++u) {
        const double d = H(c + u) - shift;
        s1[u] += d, s2[u] += d * d;
      }
    }
    for (; c < cols; ++c) {
      const double d = H(c) - shift;
      s1[0] += d, s2[0] += d * d;
    }
    double sum = 0, squares = 0;
    for (int u = 0; u < ACC; ++u) sum += s1[u], squares += s2[u];
    const double dm = sum / static_cast<double>(cols);
    mean = shift + dm;
    var = squares / static_cast<double>(cols) - dm * dm;
    if (var < 0) var = 0;
#endif
    const float inv_std = static_cast<float>(1.0 / std::sqrt(var + 1e-5));
    const float fmean = static_cast<float>(mean);
    for (int64_t j = 0; j < cols; ++j) out[j] = (H(j) - fmean) * inv_std * gamma[j] + beta[j];
#undef H
  }
}
