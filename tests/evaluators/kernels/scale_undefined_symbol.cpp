// Compiles but calls a function defined nowhere: build_failed at link time.
#include <cstdint>

float missing_helper(float value);

void scale_add(const float* x, float* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) y[i] = missing_helper(a * x[i]);
}
