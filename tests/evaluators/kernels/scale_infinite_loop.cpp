// Never returns: timed_out.
#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  volatile bool forever = true;
  while (forever) {
  }
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
