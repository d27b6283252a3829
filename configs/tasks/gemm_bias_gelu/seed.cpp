// GEMM + bias + GELU seed: an i-p-j GEMM into c (rows of b streamed, c's row
// accumulated in float), then bias and GELU over each finished row.
//
// kestrel:knob TILE_K 0 16 32 64 128
// kestrel:knob UNROLL_I 1 2 4
// kestrel:knob ERF 0 1
//
// TILE_K   0: no blocking of the k loop; else block k so a panel of b stays in cache.
// UNROLL_I rows of a (and c) per pass over a row of b.
// ERF      0: std::erf in double; 1: in float.
#include <cmath>
#include <cstdint>

#ifndef TILE_K
#define TILE_K 0
#endif
#ifndef UNROLL_I
#define UNROLL_I 1
#endif
#ifndef ERF
#define ERF 0
#endif

static inline float Gelu(float v) {
#if ERF
  return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f));
#else
  return static_cast<float>(0.5 * v * (1.0 + std::erf(v * 0.70710678118654752)));
#endif
}

static void Rows(const float* a, const float* b, float* c, int64_t i0, int64_t rows, int64_t n, int64_t k, int64_t p0,
                 int64_t p1) {
  for (int64_t p = p0; p < p1; ++p) {
    const float* brow = b + p * n;
    for (int64_t q = 0; q < rows; ++q) {
      const float av = a[(i0 + q) * k + p];
      float* crow = c + (i0 + q) * n;
      for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
    }
  }
}

void gemm_bias_gelu(const float* a, const float* b, const float* bias, float* c, int64_t m, int64_t n, int64_t k) {
  for (int64_t e = 0; e < m * n; ++e) c[e] = 0.0f;
  const int64_t tile = TILE_K > 0 ? TILE_K : (k > 0 ? k : 1);
  for (int64_t p0 = 0; p0 < k; p0 += tile) {
    const int64_t p1 = p0 + tile < k ? p0 + tile : k;
    int64_t i = 0;
    for (; i + UNROLL_I <= m; i += UNROLL_I) Rows(a, b, c, i, UNROLL_I, n, k, p0, p1);
    if (i < m) Rows(a, b, c, i, m - i, n, k, p0, p1);
  }
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) c[i * n + j] = Gelu(c[i * n + j] + bias[j]);
  }
}
