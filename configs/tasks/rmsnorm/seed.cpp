// RMS normalization seed: per row, the sum of squares, then
// y = x * inv * w with inv = 1 / sqrt(sum / cols + 1e-6).
//
// kestrel:knob ACC 1 2 4 8 16 32
// kestrel:knob ACC_DOUBLE 1 0
// kestrel:knob SCALE_DOUBLE 1 0
// kestrel:knob ROWS 1 2
//
// ACC          independent accumulators (lanes) in the sum of squares.
// ACC_DOUBLE   1: sum of squares in double; 0: in float.
// SCALE_DOUBLE 1: the scaling pass in double, rounded once; 0: in float.
// ROWS         rows whose sums of squares are taken together (more
//              independent chains when ACC is small).
#include <cmath>
#include <cstdint>

#ifndef ACC
#define ACC 1
#endif
#ifndef ACC_DOUBLE
#define ACC_DOUBLE 1
#endif
#ifndef SCALE_DOUBLE
#define SCALE_DOUBLE 1
#endif
#ifndef ROWS
#define ROWS 1
#endif

namespace {

#if ACC_DOUBLE
using Acc = double;
#else
using Acc = float;
#endif

// Sums of squares of R rows starting at `in` (rows `cols` apart).
template <int R>
void SumSquares(const float* in, int64_t cols, Acc* total) {
  Acc lanes[R][ACC] = {};
  const int64_t body = cols - cols % ACC;
  for (int64_t c = 0; c < body; c += ACC) {
    for (int q = 0; q < R; ++q) {
      for (int u = 0; u < ACC; ++u) {
        const Acc v = in[q * cols + c + u];
        lanes[q][u] += v * v;
      }
    }
  }
  for (int q = 0; q < R; ++q) {
    for (int64_t c = body; c < cols; ++c) {
      const Acc v = in[q * cols + c];
      lanes[q][0] += v * v;
    }
    Acc sum = 0;
    for (int u = 0; u < ACC; ++u) sum += lanes[q][u];
    total[q] = sum;
  }
}

void Scale(const float* in, const float* w, float* out, int64_t cols, Acc squares) {
  const double inv = 1.0 / std::sqrt(static_cast<double>(squares) / static_cast<double>(cols) + 1e-6);
#if SCALE_DOUBLE
  for (int64_t c = 0; c < cols; ++c) out[c] = static_cast<float>(static_cast<double>(in[c]) * inv * static_cast<double>(w[c]));
#else
  const float f = static_cast<float>(inv);
  for (int64_t c = 0; c < cols; ++c) out[c] = in[c] * f * w[c];
#endif
}

}  // namespace

void rmsnorm(const float* x, const float* w, float* y, int64_t rows, int64_t cols) {
  Acc squares[ROWS];
  int64_t r = 0;
  for (; r + ROWS <= rows; r += ROWS) {
    SumSquares<ROWS>(x + r * cols, cols, squares);
    for (int q = 0; q < ROWS; ++q) Scale(x + (r + q) * cols, w, y + (r + q) * cols, cols, squares[q]);
  }
  for (; r < rows; ++r) {
    SumSquares<1>(x + r * cols, cols, squares);
    Scale(x + r * cols, w, y + r * cols, cols, squares[0]);
  }
}
