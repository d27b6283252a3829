// Blocked prefix sum: y[r][c] = x[r][0] + ... + x[r][c]. A scan is one long
// chain of dependent additions; this kernel breaks it into independent
// chains, in blocks of a row, either reducing before it scans or scanning
// before it fixes up. Not a seed of the task (its task.json does not list it):
// a five-knob space of 600 configurations, measured exhaustively once
// (bench/data/cumsum_blocked.json) for the strategy benchmark.
//
// kestrel:knob LANES 1 2 4 8 16
// kestrel:knob BLOCK 256 512 1024 2048 4096 8192
// kestrel:knob ROWS 1 2 3 4 6
// kestrel:knob ACC_DOUBLE 1 0
// kestrel:knob PASS 0 1
//
// LANES      each block of a row is cut into LANES contiguous chunks, scanned
//            side by side (LANES independent chains); the elements left over
//            are scanned after them, one chain.
// BLOCK      elements of a row per block (the block stays in L1 between the
//            two passes when it is small).
// ROWS       rows scanned side by side (ROWS x LANES chains; many of them no
//            longer fit in registers).
// ACC_DOUBLE 1: running sums in double; 0: in float.
// PASS       0: reduce then scan: a first pass sums every chunk but the last,
//               so that each chain starts from the total before it;
//            1: scan then fix: every chunk is scanned from zero, then a second
//               pass adds to each chunk the total before it (a vectorizable
//               pass over y instead of one over x).
#include <cstdint>

#ifndef LANES
#define LANES 1
#endif
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ROWS
#define ROWS 1
#endif
#ifndef ACC_DOUBLE
#define ACC_DOUBLE 1
#endif
#ifndef PASS
#define PASS 0
#endif

namespace {

#if ACC_DOUBLE
using Acc = double;
#else
using Acc = float;
#endif

inline int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }

#if PASS == 0
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
#else
// p[0..n) += offset.
inline void AddOffset(float* p, int64_t n, Acc offset) {
  for (int64_t c = 0; c < n; ++c) p[c] = static_cast<float>(p[c] + offset);
}
#endif

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
    const int64_t chunk = len / LANES;
    // run[q][l]: the running sum of lane l of row q; after the scan (and the
    // fix), the sum of row q up to the end of that lane.
    Acc run[R][LANES];
    for (int q = 0; q < R; ++q) {
      Acc offset = carry[q];
      for (int l = 0; l < LANES; ++l) {
#if PASS == 0
        run[q][l] = offset;
        if (l + 1 < LANES) offset += ChunkSum(in[q] + b0 + l * chunk, chunk);
#else
        run[q][l] = 0;
#endif
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
#if PASS == 1
    for (int q = 0; q < R; ++q) {
      Acc offset = carry[q];
      for (int l = 0; l < LANES; ++l) {
        AddOffset(out[q] + b0 + l * chunk, chunk, offset);
        offset += run[q][l];
        run[q][l] = offset;
      }
    }
#endif
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
