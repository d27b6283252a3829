// Reference fused bias + GELU (the exact, erf form), in double:
//   v = x[r][c] + bias[c], y[r][c] = 0.5 * v * (1 + erf(v / sqrt(2))).
#include <cmath>
#include <cstdint>

void bias_gelu(const float* x, const float* bias, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const double v = static_cast<double>(x[r * cols + c]) + static_cast<double>(bias[c]);
      y[r * cols + c] = static_cast<float>(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
    }
  }
}
