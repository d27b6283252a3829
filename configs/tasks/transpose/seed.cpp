// Transpose seed: out (cols x rows) [c][r] = in[r][c], in tiles of
// TILE_R x TILE_C elements so that both the rows read and the rows written
// stay in cache while a tile is moved.
//
// kestrel:knob TILE_R 1 4 8 16 32 64 128
// kestrel:knob TILE_C 1 4 8 16 32 64 128
// kestrel:knob ORDER 0 1
//
// TILE_R   input rows per tile (1: no tiling along rows).
// TILE_C   input columns per tile (1: no tiling along columns).
// ORDER    0: inside a tile, walk the input by rows (reads contiguous, writes strided);
//          1: walk it by columns (reads strided, writes contiguous).
#include <cstdint>

#ifndef TILE_R
#define TILE_R 1
#endif
#ifndef TILE_C
#define TILE_C 1
#endif
#ifndef ORDER
#define ORDER 0
#endif

namespace {

inline int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }

// Moves in[r0..r1, c0..c1) to out[c0..c1, r0..r1).
inline void Tile(const float* __restrict in, float* __restrict out, int64_t rows, int64_t cols, int64_t r0,
                 int64_t r1, int64_t c0, int64_t c1) {
#if ORDER == 0
  for (int64_t r = r0; r < r1; ++r) {
    for (int64_t c = c0; c < c1; ++c) out[c * rows + r] = in[r * cols + c];
  }
#else
  for (int64_t c = c0; c < c1; ++c) {
    for (int64_t r = r0; r < r1; ++r) out[c * rows + r] = in[r * cols + c];
  }
#endif
}

}  // namespace

void transpose(const float* in, float* out, int64_t rows, int64_t cols) {
  // With a tile of 1 along a dimension, the whole dimension is one tile.
  const int64_t tile_r = TILE_R > 1 ? TILE_R : rows;
  const int64_t tile_c = TILE_C > 1 ? TILE_C : cols;
  for (int64_t r0 = 0; r0 < rows; r0 += tile_r) {
    const int64_t r1 = Min(r0 + tile_r, rows);
    for (int64_t c0 = 0; c0 < cols; c0 += tile_c) Tile(in, out, rows, cols, r0, r1, c0, Min(c0 + tile_c, cols));
  }
}
