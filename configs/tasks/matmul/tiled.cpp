// Blocked GEMM: c = a * b (row-major, a: m x k, b: k x n), blocked over i,
// k and j with all three block sizes as knobs, the loop order inside a block
// and the number of rows of c updated together. Not a seed of the task (its
// task.json does not list it): a five-knob space of 576 configurations,
// measured exhaustively once (bench/data/matmul_tiled.json) for the strategy
// benchmark.
//
// kestrel:knob ORDER 0 1 2
// kestrel:knob TILE_I 16 32 64 128
// kestrel:knob TILE_K 256 32 64 128
// kestrel:knob TILE_J 1024 64 128 256
// kestrel:knob UNROLL_I 1 2 4
//
// ORDER    0: i-j-p, a dot product per element of c (strided reads of b);
//          1: i-p-j, rows of b scaled into rows of c (unit stride, vectorizes);
//          2: p-i-j, like 1 with the row of b reused across the rows of the block.
// TILE_I   rows of c per block: how many rows of a share one block of b before
//          the next is loaded (with ORDER 2, also the rows of c swept per row of b).
// TILE_K   depth of a block (rows of b kept hot in cache).
// TILE_J   width of a block (columns of b and c).
// UNROLL_I rows of c computed together, sharing each load of b.
#include <cstdint>

#ifndef ORDER
#define ORDER 0
#endif
#ifndef TILE_I
#define TILE_I 16
#endif
#ifndef TILE_K
#define TILE_K 256
#endif
#ifndef TILE_J
#define TILE_J 1024
#endif
#ifndef UNROLL_I
#define UNROLL_I 1
#endif

namespace {

inline int64_t Min(int64_t x, int64_t y) { return x < y ? x : y; }

// Adds a[i0..i0+U, p0..p1) * b[p0..p1, j0..j1) to c[i0..i0+U, j0..j1).
template <int U>
void Block(const float* a, const float* b, float* c, int64_t n, int64_t k, int64_t i0, int64_t p0, int64_t p1,
           int64_t j0, int64_t j1) {
#if ORDER == 0
  for (int64_t j = j0; j < j1; ++j) {
    float sum[U] = {};
    for (int64_t p = p0; p < p1; ++p) {
      const float bv = b[p * n + j];
      for (int u = 0; u < U; ++u) sum[u] += a[(i0 + u) * k + p] * bv;
    }
    for (int u = 0; u < U; ++u) c[(i0 + u) * n + j] += sum[u];
  }
#elif ORDER == 1
  for (int64_t p = p0; p < p1; ++p) {
    float av[U];
    for (int u = 0; u < U; ++u) av[u] = a[(i0 + u) * k + p];
    const float* brow = b + p * n;
    for (int64_t j = j0; j < j1; ++j) {
      const float bv = brow[j];
      for (int u = 0; u < U; ++u) c[(i0 + u) * n + j] += av[u] * bv;
    }
  }
#else
  for (int64_t p = p0; p < p1; ++p) {
    const float* brow = b + p * n;
    for (int u = 0; u < U; ++u) {
      const float av = a[(i0 + u) * k + p];
      float* crow = c + (i0 + u) * n;
      for (int64_t j = j0; j < j1; ++j) crow[j] += av * brow[j];
    }
  }
#endif
}

}  // namespace

void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  for (int64_t e = 0; e < m * n; ++e) c[e] = 0.0f;
  for (int64_t i0 = 0; i0 < m; i0 += TILE_I) {
    const int64_t i1 = Min(i0 + TILE_I, m);
    for (int64_t p0 = 0; p0 < k; p0 += TILE_K) {
      const int64_t p1 = Min(p0 + TILE_K, k);
      for (int64_t j0 = 0; j0 < n; j0 += TILE_J) {
        const int64_t j1 = Min(j0 + TILE_J, n);
        int64_t i = i0;
        for (; i + UNROLL_I <= i1; i += UNROLL_I) Block<UNROLL_I>(a, b, c, n, k, i, p0, p1, j0, j1);
        for (; i < i1; ++i) Block<1>(a, b, c, n, k, i, p0, p1, j0, j1);
      }
    }
  }
}
