// Prefix-sum seed: y[r][c] = x[r][0] + ... + x[r][c]. A scan is one long chain
// of dependent additions; this seed breaks it into independent chains.
//
// kestrel:knob LANES 1 2 4 8 16
// kestrel:knob BLOCK 512 2048 8192
// kestrel:knob ROWS 1 2 4
// kestrel:knob ACC_DOUBLE 1 0
//
// LANES      each block of a row is cut into LANES contiguous chunks; a first
//            pass sums every chunk, then the chunks are scanned side by side,
//            each from the total of the chunks before it (LANES chains).
// BLOCK      elements of a row per block (the block stays in L1 between the
//            two passes).
// ROWS       rows scanned side by side (more independent chains).
// ACC_DOUBLE 1: running sums in double; 0: in float.
#include <cstdint>

#ifndef LANES
#define LANES 1
#endif
#ifndef BLOCK
#define BLOCK 512
#endif
#ifndef ROWS
#define ROWS 1
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

// Sum of p[0..n), in four independent partial sums.
inline Acc ChunkSum(const float* p, int64_t n) {
  Acc part[4] = {0, 0, 0, 0};
  int64_t c = 0;
  for (; c + 4 <= n; c += 4) {
    for (int u = 0; u < 4; ++u) part[u] += p[c + u];
  }
  for (; c < n; ++c) part[0] += p[c];
  return (part[0] + part[1]) + (part[2] + part[3]);
}

// Scans R rows starting at row r0, side by side.
template <int R>
void ScanRows(const float* x, float* y, int64_t cols, int64_t r0) {
  const float* in[R];
  float* out[R];
  Acc carry[R];
  for (int q = 0; q < R; ++q) {
    in[q] = x + (r0 + q) * cols;
    out[q] = y + (r0 + q) * cols;
    carry[q] = 0;
  }
    for (int64_t b0 = 0; b0 < cols; b0 += BLOCK) {
    const int64_t len = Min(BLOCK, cols - b0);
    const int64_t chunk = len / LANES;  // the last lane also takes the remainder
    Acc run[R][LANES];
    for (int q = 0; q < R; ++q) {
      Acc offset = carry[q];
      for (int l = 0; l < LANES; ++l) {
        run[q][l] = offset;
        if (l + 1 < LANES) offset += ChunkSum(in[q] + b0 + l * chunk, chunk);
      }
    }
    for (int64_t c = b0; c < b0 + chunk; ++c) {
      for (int q = 0; q < R; ++q) {
        for (int l = 0; l < LANES; ++l) {
          run[q][l] += in[q][l * chunk + c];
          out[q][l * chunk + c] = static_cast<float>(run[q][l]);
        }
      }
    }
    for (int q = 0; q < R; ++q) {
      Acc last = run[q][LANES - 1];
      for (int64_t c = b0 + LANES * chunk; c < b0 + len; ++c) {
        last += in[q][c];
        out[q][c] = static_cast<float>(last);
      }
      carry[q] = last;
    }
  }
}

}  // namespace

void cumsum(const float* x, float* y, int64_t rows, int64_t cols) {
  int64_t r = 0;
  for (; r + ROWS <= rows; r += ROWS) ScanRows<ROWS>(x, y, cols, r);
  for (; r < rows; ++r) ScanRows<1>(x, y, cols, r);
}
