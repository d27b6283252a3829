// Aborts: crashed, killed by SIGABRT.
#include <cstdint>
#include <cstdlib>

void scale_add(const float* x, float* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
  std::abort();
}
