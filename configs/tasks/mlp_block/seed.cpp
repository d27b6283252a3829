// MLP block seed: two i-p-j GEMMs in float through a t x h hidden buffer,
// GELU applied between them.
//
// kestrel:knob UNROLL_I 1 2 3 4 6 8 12 16
// kestrel:knob ERF 0 1
// kestrel:knob FUSE 0 1
//
// UNROLL_I rows per pass over a row of the weights.
// ERF      0: std::erf in double; 1: in float.
// FUSE     0: the whole hidden layer, then GELU, then the second GEMM; 1: token by
//             token (a 1 x h hidden row that stays in cache).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#ifndef UNROLL_I
#define UNROLL_I 1
#endif
#ifndef ERF
#define ERF 0
#endif
#ifndef FUSE
#define FUSE 0
#endif

static inline float Gelu(float v) {
#if ERF
  return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f));
#else
  return static_cast<float>(0.5 * v * (1.0 + std::erf(v * 0.70710678118654752)));
#endif
}

// c (rows x n) = bias + a (rows x k) * b (k x n), UNROLL_I rows at a time.
static void Linear(const float* a, const float* b, const float* bias, float* c, int64_t rows, int64_t n, int64_t k) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < n; ++j) c[i * n + j] = bias[j];
  }
  for (int64_t i0 = 0; i0 < rows; i0 += UNROLL_I) {
    const int64_t count = i0 + UNROLL_I <= rows ? UNROLL_I : rows - i0;
    for (int64_t p = 0; p < k; ++p) {
      const float* brow = b + p * n;
      for (int64_t q = 0; q < count; ++q) {
        const float av = a[(i0 + q) * k + p];
        float* crow = c + (i0 + q) * n;
        for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
      }
    }
  }
}

void mlp_block(const float* x, const float* w1, const float* b1, const float* w2, const float* b2, float* y, int64_t t,
               int64_t d, int64_t h) {
#if FUSE
  std::vector<float> hidden(static_cast<size_t>(h));
  for (int64_t i = 0; i < t; ++i) {
    Linear(x + i * d, w1, b1, hidden.data(), 1, h, d);
    for (auto& v : hidden) v = Gelu(v);
    Linear(hidden.data(), w2, b2, y + i * d, 1, d, h);
  }
#else
  std::vector<float> hidden(static_cast<size_t>(t * h));
  Linear(x, w1, b1, hidden.data(), t, h, d);
  for (auto& v : hidden) v = Gelu(v);
  Linear(hidden.data(), w2, b2, y, t, d, h);
#endif
}
