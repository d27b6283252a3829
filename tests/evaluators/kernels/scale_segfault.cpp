// Writes through a null pointer: crashed, killed by SIGSEGV.
#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  volatile float* nowhere = nullptr;
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
  *nowhere = 1.0f;
}
