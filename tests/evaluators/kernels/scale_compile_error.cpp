// Does not compile: build_failed, with the error in the log.
#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + undeclared_variable;
}
