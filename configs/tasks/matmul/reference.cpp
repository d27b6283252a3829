// Reference GEMM: c[i][j] = sum_p a[i][p] * b[p][j], row-major, accumulated
// in double and rounded once.
#include <cmath>
#include <cstdint>

void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p) sum += static_cast<double>(a[i * k + p]) * static_cast<double>(b[p * n + j]);
      c[i * n + j] = static_cast<float>(sum);
    }
  }
}
