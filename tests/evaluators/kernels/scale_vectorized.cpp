// The profile ladder's auto-vectorized rung: the compiler's choice of vectors.
#include <cstdint>

void scale_add(const float* __restrict x, float* __restrict y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
