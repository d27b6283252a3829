// FIR filter seed: y[r][i] = sum_{k < taps, i + k < n} w[k] * x[r][i + k].
// The outputs whose window lies inside the row (i + taps <= n) take the fast
// path below; the last taps - 1 outputs of a row are done one by one.
//
// kestrel:knob ORDER 0 1 2
// kestrel:knob BLOCK 8 16 32 64 128
// kestrel:knob UNROLL_K 1 2 4
//
// ORDER    0: one output at a time, a dot product over the taps (a dependent
//             chain of additions; UNROLL_K independent partial sums);
//          1: tap by tap over a block of outputs held in memory
//             (y[i..i+BLOCK) += w[k] * x[i+k..]), UNROLL_K taps per pass;
//          2: the same with the block of outputs in a local array (registers),
//             written once at the end.
// BLOCK    outputs per block (orders 1 and 2).
// UNROLL_K taps per step of the tap loop.
#include <cstdint>

#ifndef ORDER
#define ORDER 0
#endif
#ifndef BLOCK
#define BLOCK 8
#endif
#ifndef UNROLL_K
#define UNROLL_K 1
#endif

namespace {

inline int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }

// Output i of one row, with the window cut at the end of the row.
inline float Tail(const float* in, const float* w, int64_t n, int64_t taps, int64_t i) {
  float sum = 0.0f;
  for (int64_t k = 0; k < taps && i + k < n; ++k) sum += w[k] * in[i + k];
  return sum;
}

// Outputs [i0, i1) of one row, every window inside the row.
void Full(const float* __restrict in, const float* __restrict w, float* __restrict out, int64_t taps, int64_t i0,
          int64_t i1) {
#if ORDER == 0
  for (int64_t i = i0; i < i1; ++i) {
    float part[UNROLL_K] = {};
    int64_t k = 0;
    for (; k + UNROLL_K <= taps; k += UNROLL_K) {
      for (int u = 0; u < UNROLL_K; ++u) part[u] += w[k + u] * in[i + k + u];
    }
    for (; k < taps; ++k) part[0] += w[k] * in[i + k];
    float sum = 0.0f;
    for (int u = 0; u < UNROLL_K; ++u) sum += part[u];
    out[i] = sum;
  }
#elif ORDER == 1
  for (int64_t b = i0; b < i1; b += BLOCK) {
    const int64_t e = Min(b + BLOCK, i1);
    for (int64_t i = b; i < e; ++i) out[i] = 0.0f;
    int64_t k = 0;
    for (; k + UNROLL_K <= taps; k += UNROLL_K) {
      for (int64_t i = b; i < e; ++i) {
        float add = 0.0f;
        for (int u = 0; u < UNROLL_K; ++u) add += w[k + u] * in[i + k + u];
        out[i] += add;
      }
    }
    for (; k < taps; ++k) {
      for (int64_t i = b; i < e; ++i) out[i] += w[k] * in[i + k];
    }
  }
#else
  int64_t b = i0;
  for (; b + BLOCK <= i1; b += BLOCK) {
    float acc[BLOCK] = {};
    int64_t k = 0;
    for (; k + UNROLL_K <= taps; k += UNROLL_K) {
      for (int u = 0; u < UNROLL_K; ++u) {
        const float wk = w[k + u];
        for (int j = 0; j < BLOCK; ++j) acc[j] += wk * in[b + j + k + u];
      }
    }
    for (; k < taps; ++k) {
      for (int j = 0; j < BLOCK; ++j) acc[j] += w[k] * in[b + j + k];
    }
    for (int j = 0; j < BLOCK; ++j) out[b + j] = acc[j];
  }
  for (int64_t i = b; i < i1; ++i) {
    float sum = 0.0f;
    for (int64_t k = 0; k < taps; ++k) sum += w[k] * in[i + k];
    out[i] = sum;
  }
#endif
}

}  // namespace

void conv1d(const float* x, const float* w, float* y, int64_t rows, int64_t n, int64_t taps) {
  const int64_t full = n >= taps ? n - taps + 1 : 0;  // outputs with the whole window inside the row
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * n;
    float* out = y + r * n;
    Full(in, w, out, taps, 0, full);
    for (int64_t i = full; i < n; ++i) out[i] = Tail(in, w, n, taps, i);
  }
}
