// Reference triad: z[i] = a * x[i] + y[i], computed in double and rounded once.
#include <cstdint>

void triad(const float* x, const float* y, float* z, float a, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    z[i] = static_cast<float>(static_cast<double>(a) * static_cast<double>(x[i]) + static_cast<double>(y[i]));
  }
}
