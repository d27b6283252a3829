// Reference FIR filter: y[r][i] = sum_{k < taps, i + k < n} w[k] * x[r][i + k],
// accumulated in double and rounded once.
#include <cstdint>

void conv1d(const float* x, const float* w, float* y, int64_t rows, int64_t n, int64_t taps) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < n; ++i) {
      double sum = 0.0;
      for (int64_t k = 0; k < taps && i + k < n; ++k) {
        sum += static_cast<double>(w[k]) * static_cast<double>(x[r * n + i + k]);
      }
      y[r * n + i] = static_cast<float>(sum);
    }
  }
}
