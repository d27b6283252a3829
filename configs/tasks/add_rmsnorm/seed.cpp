// Residual add + RMSNorm seed: one pass adds and sums squares, one scales.
//
// kestrel:knob ACC 1 2 4 8 16 32 64 128
// kestrel:knob ACC_DOUBLE 1 0
// kestrel:knob REREAD 0 1
//
// ACC        independent lanes for the sum of squares.
// ACC_DOUBLE 1: sum in double; 0: in float.
// REREAD     0: the scaling pass reads h back; 1: it recomputes x + res.
#include <cmath>
#include <cstdint>

#ifndef ACC
#define ACC 1
#endif
#ifndef ACC_DOUBLE
#define ACC_DOUBLE 1
#endif
#ifndef REREAD
#define REREAD 0
#endif

#if ACC_DOUBLE
using Acc = double;
#else
using Acc = float;
#endif

void add_rmsnorm(const float* x, const float* res, const float* w, float* h, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* a = x + r * cols;
    const float* b = res + r * cols;
    float* hs = h + r * cols;
    Acc lanes[ACC] = {};
    int64_t c = 0;
    for (; c + ACC <= cols; c += ACC) {
      for (int u = 0; u < ACC; ++u) {
        const float s = a[c + u] + b[c + u];
        hs[c + u] = s;
        lanes[u] += static_cast<Acc>(s) * s;
      }
    }
    for (; c < cols; ++c) {
      const float s = a[c] + b[c];
      hs[c] = s;
      lanes[0] += static_cast<Acc>(s) * s;
    }
    Acc squares = 0;
    for (int u = 0; u < ACC; ++u) squares += lanes[u];
    const float inv = static_cast<float>(1.0 / std::sqrt(static_cast<double>(squares) / static_cast<double>(cols) + 1e-6));
    float* out = y + r * cols;
    for (int64_t j = 0; j < cols; ++j) {
#if REREAD
      out[j] = (a[j] + b[j]) * inv * w[j];
#else
      out[j] = hs[j] * inv * w[j];
#endif
    }
  }
}
