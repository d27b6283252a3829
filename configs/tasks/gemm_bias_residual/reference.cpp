// Reference GEMM + bias + residual: each output in double, rounded once.
#include <cstdint>

void gemm_bias_residual(const float* a, const float* b, const float* bias, const float* res, float* c, int64_t m,
                        int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double v = static_cast<double>(bias[j]) + res[i * n + j];
      for (int64_t p = 0; p < k; ++p) v += static_cast<double>(a[i * k + p]) * b[p * n + j];
      c[i * n + j] = static_cast<float>(v);
    }
  }
}
