// An honest matmul, i-p-j (rows of b scaled into rows of c): the twin of
// adversarial/x_patches_changed_rows, which computes the same sums in the
// same order, but only where its inputs changed since the last call.
#include <cstdint>

void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * n;
    for (int64_t j = 0; j < n; ++j) row[j] = 0.0f;
    for (int64_t p = 0; p < k; ++p) {
      const float av = a[i * k + p];
      const float* brow = b + p * n;
      for (int64_t j = 0; j < n; ++j) row[j] += av * brow[j];
    }
  }
}
