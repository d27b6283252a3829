// Batched small matmul seed: c[b] = a[b] * bm[b] for each b, row-major.
//
// kestrel:knob ORDER 0 1 2
// kestrel:knob UNROLL_I 1 2 3 4
// kestrel:knob UNROLL_P 1 2 4
//
// ORDER    0: i-j-p, one dot product per element of c (strided reads of bm);
//          1: i-p-j, rows of bm scaled into rows of c (unit stride, vectorizes over j);
//          2: bm transposed into a scratch buffer first, then i-j-p with both
//             operands read with unit stride.
// UNROLL_I rows of c computed together, sharing each load of bm.
// UNROLL_P steps of the p loop per iteration (orders 0 and 2: independent
//          partial sums; order 1: rows of bm added per pass over a row of c).
#include <cstddef>
#include <cstdint>
#include <vector>

#ifndef ORDER
#define ORDER 0
#endif
#ifndef UNROLL_I
#define UNROLL_I 1
#endif
#ifndef UNROLL_P
#define UNROLL_P 1
#endif

namespace {

// Rows [i0, i0 + U) of c = a * b for one matrix of the batch. With TRANSPOSED,
// b holds bm transposed (n x k); otherwise bm itself (k x n).
template <int U, bool TRANSPOSED>
void Rows(const float* __restrict a, const float* __restrict b, float* __restrict c, int64_t n, int64_t k,
          int64_t i0) {
#if ORDER == 1
  for (int u = 0; u < U; ++u) {
    for (int64_t j = 0; j < n; ++j) c[(i0 + u) * n + j] = 0.0f;
  }
  int64_t p = 0;
  for (; p + UNROLL_P <= k; p += UNROLL_P) {
    for (int u = 0; u < U; ++u) {
      float av[UNROLL_P];
      for (int q = 0; q < UNROLL_P; ++q) av[q] = a[(i0 + u) * k + p + q];
      float* crow = c + (i0 + u) * n;
      for (int64_t j = 0; j < n; ++j) {
        float add = 0.0f;
        for (int q = 0; q < UNROLL_P; ++q) add += av[q] * b[(p + q) * n + j];
        crow[j] += add;
      }
    }
  }
  for (; p < k; ++p) {
    for (int u = 0; u < U; ++u) {
      const float av = a[(i0 + u) * k + p];
      float* crow = c + (i0 + u) * n;
      for (int64_t j = 0; j < n; ++j) crow[j] += av * b[p * n + j];
    }
  }
#else
  for (int64_t j = 0; j < n; ++j) {
    float part[U][UNROLL_P] = {};
    int64_t p = 0;
    for (; p + UNROLL_P <= k; p += UNROLL_P) {
      for (int q = 0; q < UNROLL_P; ++q) {
        const float bv = TRANSPOSED ? b[j * k + p + q] : b[(p + q) * n + j];
        for (int u = 0; u < U; ++u) part[u][q] += a[(i0 + u) * k + p + q] * bv;
      }
    }
    for (; p < k; ++p) {
      const float bv = TRANSPOSED ? b[j * k + p] : b[p * n + j];
      for (int u = 0; u < U; ++u) part[u][0] += a[(i0 + u) * k + p] * bv;
    }
    for (int u = 0; u < U; ++u) {
      float sum = 0.0f;
      for (int q = 0; q < UNROLL_P; ++q) sum += part[u][q];
      c[(i0 + u) * n + j] = sum;
    }
  }
#endif
}

}  // namespace

void bmm(const float* a, const float* bm, float* c, int64_t batch, int64_t m, int64_t n, int64_t k) {
  constexpr bool kTransposed = ORDER == 2;
  std::vector<float> scratch(kTransposed ? static_cast<std::size_t>(k * n) : 0);
  for (int64_t b = 0; b < batch; ++b) {
    const float* ab = a + b * m * k;
    const float* bb = bm + b * k * n;
    float* cb = c + b * m * n;
    if (kTransposed) {
      for (int64_t p = 0; p < k; ++p) {
        for (int64_t j = 0; j < n; ++j) scratch[j * k + p] = bb[p * n + j];
      }
      bb = scratch.data();
    }
    int64_t i = 0;
    for (; i + UNROLL_I <= m; i += UNROLL_I) Rows<UNROLL_I, kTransposed>(ab, bb, cb, n, k, i);
    for (; i < m; ++i) Rows<1, kTransposed>(ab, bb, cb, n, k, i);
  }
}
