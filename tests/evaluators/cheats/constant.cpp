// Returns a constant near the outputs' mean: wrong.
#include <cstdint>

void scale_add(const float*, float* y, int64_t n, float) {
  for (int64_t i = 0; i < n; ++i) y[i] = 1.0f;
}
