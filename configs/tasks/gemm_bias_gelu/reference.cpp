// Reference linear layer + GELU: each dot product in double, bias and erf
// GELU in double, rounded once.
#include <cmath>
#include <cstdint>

void gemm_bias_gelu(const float* a, const float* b, const float* bias, float* c, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double v = bias[j];
      for (int64_t p = 0; p < k; ++p) v += static_cast<double>(a[i * k + p]) * b[p * n + j];
      c[i * n + j] = static_cast<float>(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
    }
  }
}
