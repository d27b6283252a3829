// 5-point stencil seed: out = c0*centre + c1*(north + south + west + east),
// with zero outside the grid.
//
// kestrel:knob EDGES 0 1
// kestrel:knob ROWS 1 2 4
// kestrel:knob TILE_J 0 256 1024
// kestrel:knob FORM 0 1
// kestrel:knob ACC_DOUBLE 1 0
//
// EDGES   0: every point tests whether its neighbours exist (branches in the
//            inner loop); 1: the first and last column and the first and last
//            row are done apart, the interior with no tests (vectorizes).
// ROWS    output rows computed per pass (each loaded input row serves up to
//         three output rows).
// TILE_J  columns per strip (0: the whole row), so that the rows in use stay in L1.
// FORM    0: c0*centre + c1*(sum of the four neighbours);
//         1: the same with the neighbour sum formed as (north + south) + (west + east).
// ACC_DOUBLE 1: arithmetic in double (converted per point); 0: in float.
#include <cstdint>

#ifndef EDGES
#define EDGES 0
#endif
#ifndef ROWS
#define ROWS 1
#endif
#ifndef TILE_J
#define TILE_J 0
#endif
#ifndef FORM
#define FORM 0
#endif
#ifndef ACC_DOUBLE
#define ACC_DOUBLE 1
#endif

namespace {

inline int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }

#if ACC_DOUBLE
using Acc = double;
#else
using Acc = float;
#endif

inline float Point(Acc centre, Acc north, Acc south, Acc west, Acc east, Acc c0, Acc c1) {
#if FORM == 0
  return static_cast<float>(c0 * centre + c1 * (north + south + west + east));
#else
  return static_cast<float>(c0 * centre + c1 * ((north + south) + (west + east)));
#endif
}

// Output rows [i0, i1), columns [j0, j1); every point checks its neighbours.
void Checked(const float* in, float* out, float c0, float c1, int64_t rows, int64_t cols, int64_t i0, int64_t i1,
             int64_t j0, int64_t j1) {
  for (int64_t i = i0; i < i1; ++i) {
    for (int64_t j = j0; j < j1; ++j) {
      const float north = i > 0 ? in[(i - 1) * cols + j] : 0.0f;
      const float south = i + 1 < rows ? in[(i + 1) * cols + j] : 0.0f;
      const float west = j > 0 ? in[i * cols + j - 1] : 0.0f;
      const float east = j + 1 < cols ? in[i * cols + j + 1] : 0.0f;
      out[i * cols + j] = Point(in[i * cols + j], north, south, west, east, c0, c1);
    }
  }
}

// Interior rows [i0, i0 + R) (all with both neighbours), columns [j0, j1)
// inside [1, cols - 1).
template <int R>
void Interior(const float* __restrict in, float* __restrict out, float c0, float c1, int64_t cols, int64_t i0,
              int64_t j0, int64_t j1) {
  for (int64_t j = j0; j < j1; ++j) {
    for (int r = 0; r < R; ++r) {
      const float* p = in + (i0 + r) * cols + j;
      out[(i0 + r) * cols + j] = Point(p[0], p[-cols], p[cols], p[-1], p[1], c0, c1);
    }
  }
}

}  // namespace

void stencil2d(const float* in, float* out, float c0, float c1, int64_t rows, int64_t cols) {
#if EDGES == 0
  const int64_t tile = TILE_J > 0 ? TILE_J : cols;
  for (int64_t i0 = 0; i0 < rows; i0 += ROWS) {
    const int64_t i1 = Min(i0 + ROWS, rows);
    for (int64_t j0 = 0; j0 < cols; j0 += tile) Checked(in, out, c0, c1, rows, cols, i0, i1, j0, Min(j0 + tile, cols));
  }
#else
  if (rows < 3 || cols < 3) {
    Checked(in, out, c0, c1, rows, cols, 0, rows, 0, cols);
    return;
  }
  Checked(in, out, c0, c1, rows, cols, 0, 1, 0, cols);
  Checked(in, out, c0, c1, rows, cols, rows - 1, rows, 0, cols);
  const int64_t tile = TILE_J > 0 ? TILE_J : cols;
  int64_t i = 1;
  for (; i + ROWS <= rows - 1; i += ROWS) {
    Checked(in, out, c0, c1, rows, cols, i, i + ROWS, 0, 1);
    Checked(in, out, c0, c1, rows, cols, i, i + ROWS, cols - 1, cols);
    for (int64_t j0 = 1; j0 < cols - 1; j0 += tile) Interior<ROWS>(in, out, c0, c1, cols, i, j0, Min(j0 + tile, cols - 1));
  }
  for (; i < rows - 1; ++i) {
    Checked(in, out, c0, c1, rows, cols, i, i + 1, 0, 1);
    Checked(in, out, c0, c1, rows, cols, i, i + 1, cols - 1, cols);
    for (int64_t j0 = 1; j0 < cols - 1; j0 += tile) Interior<1>(in, out, c0, c1, cols, i, j0, Min(j0 + tile, cols - 1));
  }
#endif
}
