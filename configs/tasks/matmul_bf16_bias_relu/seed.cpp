// bf16 linear layer + ReLU seed: b is widened to float one row at a time, an
// i-p-j GEMM accumulates c in float, then bias and ReLU.
//
// kestrel:knob WIDEN_B 0 1
// kestrel:knob UNROLL_I 1 2 3 4 5 6 8 10 12 16 20 24 32 48 64
//
// WIDEN_B  0: widen each element of b where it is used; 1: widen all of b into a
//             float copy first (k x n floats), then run a float GEMM.
// UNROLL_I rows of a per pass over a row of b.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#ifndef WIDEN_B
#define WIDEN_B 0
#endif
#ifndef UNROLL_I
#define UNROLL_I 1
#endif

static inline float Widen(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

template <typename B>
static void Rows(const uint16_t* a, const B* b, float* c, int64_t i0, int64_t rows, int64_t n, int64_t k) {
  for (int64_t p = 0; p < k; ++p) {
    const B* brow = b + p * n;
    for (int64_t q = 0; q < rows; ++q) {
      const float av = Widen(a[(i0 + q) * k + p]);
      float* crow = c + (i0 + q) * n;
      for (int64_t j = 0; j < n; ++j) {
        if constexpr (sizeof(B) == 2) {
          crow[j] += av * Widen(brow[j]);
        } else {
          crow[j] += av * brow[j];
        }
      }
    }
  }
}

void matmul_bf16_bias_relu(const uint16_t* a, const uint16_t* b, const float* bias, float* c, int64_t m, int64_t n,
                           int64_t k) {
  for (int64_t e = 0; e < m * n; ++e) c[e] = 0.0f;
#if WIDEN_B
  std::vector<float> wide(static_cast<size_t>(k * n));
  for (int64_t e = 0; e < k * n; ++e) wide[static_cast<size_t>(e)] = Widen(b[e]);
  const float* bsrc = wide.data();
#else
  const uint16_t* bsrc = b;
#endif
  int64_t i = 0;
  for (; i + UNROLL_I <= m; i += UNROLL_I) Rows(a, bsrc, c, i, UNROLL_I, n, k);
  if (i < m) Rows(a, bsrc, c, i, m - i, n, k);
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      const float v = c[r * n + j] + bias[j];
      c[r * n + j] = v > 0.0f ? v : 0.0f;
    }
  }
}
