// Tiled 5-point stencil: out = c0*centre + c1*(north + south + west + east),
// with zero outside the grid, computed in blocks of ROWS rows by TILE_J
// columns. Not a seed of the task (its task.json does not list it): a six-knob
// space of 576 configurations, measured exhaustively once
// (bench/data/stencil2d_tiled.json) for the strategy benchmark.
//
// kestrel:knob EDGES 0 1
// kestrel:knob ORDER 0 1
// kestrel:knob ROWS 1 2 3 4 6 8
// kestrel:knob TILE_J 0 64 128 256 512 1024
// kestrel:knob ACC_DOUBLE 1 0
// kestrel:knob STORE 0 1
//
// EDGES      0: every point tests whether its neighbours exist (branches or
//               masked loads in the inner loop); 1: the first and last row and
//               column are done apart, the interior with no tests.
// ORDER      inside a block, 0: column by column, the ROWS points of a column
//               together (each loaded input row serves up to three of them in
//               registers); 1: row by row (reuse of the three input rows a row
//               reads through the cache, which a narrow TILE_J keeps in L1).
// ROWS       output rows per block (the rows left over go one at a time).
// TILE_J     columns per block (0: the whole row).
// ACC_DOUBLE 1: arithmetic in double (converted per point); 0: in float.
// STORE      0: ordinary stores into out (each line of out is read first);
//            1: a block is computed 256 columns at a time into a buffer on the
//               stack and copied out with non-temporal (streaming) stores, which
//               skip that read and do not keep out in the cache.
#include <cstdint>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#ifndef EDGES
#define EDGES 0
#endif
#ifndef ORDER
#define ORDER 0
#endif
#ifndef ROWS
#define ROWS 1
#endif
#ifndef TILE_J
#define TILE_J 0
#endif
#ifndef ACC_DOUBLE
#define ACC_DOUBLE 1
#endif
#ifndef STORE
#define STORE 0
#endif

namespace {

#if ACC_DOUBLE
using Acc = double;
#else
using Acc = float;
#endif

inline int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }

// The output at (i, j); with kTests a neighbour outside the grid is zero,
// without, (i, j) must be an interior point.
template <bool kTests>
inline float Point(const float* __restrict in, int64_t rows, int64_t cols, int64_t i, int64_t j, Acc c0, Acc c1) {
  const float* p = in + i * cols + j;
  Acc north, south, west, east;
  if constexpr (kTests) {
    north = i > 0 ? p[-cols] : 0.0f;
    south = i + 1 < rows ? p[cols] : 0.0f;
    west = j > 0 ? p[-1] : 0.0f;
    east = j + 1 < cols ? p[1] : 0.0f;
  } else {
    north = p[-cols];
    south = p[cols];
    west = p[-1];
    east = p[1];
  }
  return static_cast<float>(c0 * static_cast<Acc>(p[0]) + c1 * (north + south + west + east));
}

// Rows [i0, i0 + R) by columns [j0, j1) of the output, written to dst
// (element (i0, j0); `ld` floats from one row to the next).
template <int R, bool kTests>
void Block(const float* __restrict in, float* __restrict dst, int64_t ld, int64_t rows, int64_t cols, int64_t i0,
           int64_t j0, int64_t j1, Acc c0, Acc c1) {
#if ORDER == 0
  for (int64_t j = j0; j < j1; ++j) {
    for (int r = 0; r < R; ++r) dst[r * ld + (j - j0)] = Point<kTests>(in, rows, cols, i0 + r, j, c0, c1);
  }
#else
  for (int r = 0; r < R; ++r) {
    for (int64_t j = j0; j < j1; ++j) dst[r * ld + (j - j0)] = Point<kTests>(in, rows, cols, i0 + r, j, c0, c1);
  }
#endif
}

#if STORE
constexpr int64_t kStage = 256;  // columns computed into the stack buffer at a time

// dst[0, n) = src[0, n), with streaming stores from dst's first 16-byte boundary.
void Stream(const float* __restrict src, float* __restrict dst, int64_t n) {
  int64_t j = 0;
#if defined(__SSE2__)
  for (; j < n && (reinterpret_cast<uintptr_t>(dst + j) & 15) != 0; ++j) dst[j] = src[j];
  for (; j + 4 <= n; j += 4) _mm_stream_ps(dst + j, _mm_loadu_ps(src + j));
#endif
  for (; j < n; ++j) dst[j] = src[j];
}
#endif

template <int R, bool kTests>
void Tile(const float* __restrict in, float* __restrict out, int64_t rows, int64_t cols, int64_t i0, int64_t j0,
          int64_t j1, Acc c0, Acc c1) {
#if STORE
  alignas(64) float stage[R * kStage];
  for (int64_t s0 = j0; s0 < j1; s0 += kStage) {
    const int64_t s1 = Min(s0 + kStage, j1);
    Block<R, kTests>(in, stage, kStage, rows, cols, i0, s0, s1, c0, c1);
    for (int r = 0; r < R; ++r) Stream(stage + r * kStage, out + (i0 + r) * cols + s0, s1 - s0);
  }
#else
  Block<R, kTests>(in, out + i0 * cols + j0, cols, rows, cols, i0, j0, j1, c0, c1);
#endif
}

// Output rows [i0, i1) by columns [j0, j1): blocks of ROWS rows by TILE_J
// columns, then the rows left over one at a time.
template <bool kTests>
void Sweep(const float* __restrict in, float* __restrict out, int64_t rows, int64_t cols, int64_t i0, int64_t i1,
           int64_t j0, int64_t j1, Acc c0, Acc c1) {
  const int64_t tile = TILE_J > 0 ? TILE_J : j1 - j0;
  int64_t i = i0;
  for (; i + ROWS <= i1; i += ROWS) {
    for (int64_t s = j0; s < j1; s += tile) Tile<ROWS, kTests>(in, out, rows, cols, i, s, Min(s + tile, j1), c0, c1);
  }
  for (; i < i1; ++i) {
    for (int64_t s = j0; s < j1; s += tile) Tile<1, kTests>(in, out, rows, cols, i, s, Min(s + tile, j1), c0, c1);
  }
}

}  // namespace

void stencil2d(const float* in, float* out, float c0, float c1, int64_t rows, int64_t cols) {
#if EDGES == 0
  Sweep<true>(in, out, rows, cols, 0, rows, 0, cols, c0, c1);
#else
  if (rows < 3 || cols < 3) {
    Sweep<true>(in, out, rows, cols, 0, rows, 0, cols, c0, c1);
  } else {
    Sweep<true>(in, out, rows, cols, 0, 1, 0, cols, c0, c1);
    Sweep<true>(in, out, rows, cols, rows - 1, rows, 0, cols, c0, c1);
    Sweep<true>(in, out, rows, cols, 1, rows - 1, 0, 1, c0, c1);
    Sweep<true>(in, out, rows, cols, 1, rows - 1, cols - 1, cols, c0, c1);
    Sweep<false>(in, out, rows, cols, 1, rows - 1, 1, cols - 1, c0, c1);
  }
#endif
#if STORE && defined(__SSE2__)
  _mm_sfence();  // the streaming stores are visible before the caller reads out
#endif
}
