// GEMM + bias + residual seed: c starts as bias + res, then an i-p-j GEMM
// accumulates into it (the epilogue costs nothing extra).
//
// kestrel:knob TILE_K 0 8 16 32 64 128
// kestrel:knob UNROLL_I 1 2 3 4 6
//
// TILE_K   0: no blocking of k; else k blocks so a panel of b stays in cache.
// UNROLL_I rows of a per pass over a row of b.
#include <cstdint>

#ifndef TILE_K
#define TILE_K 0
#endif
#ifndef UNROLL_I
#define UNROLL_I 1
#endif

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

void gemm_bias_residual(const float* a, const float* b, const float* bias, const float* res, float* c, int64_t m,
                        int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) c[i * n + j] = bias[j] + res[i * n + j];
  }
  const int64_t tile = TILE_K > 0 ? TILE_K : (k > 0 ? k : 1);
  for (int64_t p0 = 0; p0 < k; p0 += tile) {
    const int64_t p1 = p0 + tile < k ? p0 + tile : k;
    int64_t i = 0;
    for (; i + UNROLL_I <= m; i += UNROLL_I) Rows(a, b, c, i, UNROLL_I, n, k, p0, p1);
    if (i < m) Rows(a, b, c, i, m - i, n, k, p0, p1);
  }
}
