// Column-sum seed: out[c] = sum_r x[r][c]. The columns are taken in blocks of
// COL_BLOCK; within a block the rows are streamed and added into one
// accumulator per column, ROW_UNROLL rows at a time.
//
// kestrel:knob COL_BLOCK 1 4 16 64 256 1024
// kestrel:knob ROW_UNROLL 1 2 4 8
// kestrel:knob ACC_DOUBLE 1 0
//
// COL_BLOCK  columns summed together (1: one column at a time, a strided walk
//            down the matrix with a single dependent chain of additions;
//            larger: contiguous pieces of each row, independent additions).
// ROW_UNROLL rows added per pass over the block's accumulators
//            (fewer loads and stores of the accumulators).
// ACC_DOUBLE 1: accumulate in double; 0: in float.
#include <cstdint>

#ifndef COL_BLOCK
#define COL_BLOCK 1
#endif
#ifndef ROW_UNROLL
#define ROW_UNROLL 1
#endif
#ifndef ACC_DOUBLE
#define ACC_DOUBLE 1
#endif

namespace {

#if ACC_DOUBLE
using Acc = double;
#else
using Acc = float;
#endif

inline int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }

}  // namespace

void colsum(const float* x, float* out, int64_t rows, int64_t cols) {
  for (int64_t c0 = 0; c0 < cols; c0 += COL_BLOCK) {
    const int64_t width = Min(COL_BLOCK, cols - c0);
    Acc acc[COL_BLOCK];
    for (int64_t j = 0; j < width; ++j) acc[j] = 0;
    int64_t r = 0;
    for (; r + ROW_UNROLL <= rows; r += ROW_UNROLL) {
      const float* row = x + r * cols + c0;
      for (int64_t j = 0; j < width; ++j) {
        Acc part = row[j];
        for (int u = 1; u < ROW_UNROLL; ++u) part += row[u * cols + j];
        acc[j] += part;
      }
    }
    for (; r < rows; ++r) {
      const float* row = x + r * cols + c0;
      for (int64_t j = 0; j < width; ++j) acc[j] += row[j];
    }
    for (int64_t j = 0; j < width; ++j) out[c0 + j] = static_cast<float>(acc[j]);
  }
}
