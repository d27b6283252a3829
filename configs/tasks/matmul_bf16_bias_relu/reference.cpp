// Reference bf16 linear layer + ReLU: inputs widened exactly, sums in double,
// rounded once to float32.
#include <cstdint>
#include <cstring>

static double FromBf16(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

void matmul_bf16_bias_relu(const uint16_t* a, const uint16_t* b, const float* bias, float* c, int64_t m, int64_t n,
                           int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double v = bias[j];
      for (int64_t p = 0; p < k; ++p) v += FromBf16(a[i * k + p]) * FromBf16(b[p * n + j]);
      c[i * n + j] = static_cast<float>(v > 0.0 ? v : 0.0);
    }
  }
}
