// Reference batched matmul: c[b][i][j] = sum_p a[b][i][p] * bm[b][p][j],
// accumulated in double and rounded once.
#include <cstdint>

void bmm(const float* a, const float* bm, float* c, int64_t batch, int64_t m, int64_t n, int64_t k) {
  for (int64_t b = 0; b < batch; ++b) {
    const float* ab = a + b * m * k;
    const float* bb = bm + b * k * n;
    float* cb = c + b * m * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t p = 0; p < k; ++p) sum += static_cast<double>(ab[i * k + p]) * static_cast<double>(bb[p * n + j]);
        cb[i * n + j] = static_cast<float>(sum);
      }
    }
  }
}
