// Right on the large timed shape, wrong on small ones (the check shapes).
#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
  if (n < 1000) y[0] = 0.0f;
}
