// Reference residual add + layer normalization, in double (two passes).
#include <cmath>
#include <cstdint>

void add_layernorm(const float* x, const float* res, const float* gamma, const float* beta, float* y, int64_t rows,
                   int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* a = x + r * cols;
    const float* b = res + r * cols;
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) sum += static_cast<double>(a[c]) + b[c];
    const double mean = sum / static_cast<double>(cols);
    double squares = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      const double d = static_cast<double>(a[c]) + b[c] - mean;
      squares += d * d;
    }
    const double inv_std = 1.0 / std::sqrt(squares / static_cast<double>(cols) + 1e-5);
    for (int64_t c = 0; c < cols; ++c) {
      const double h = static_cast<double>(a[c]) + b[c];
      y[r * cols + c] = static_cast<float>((h - mean) * inv_std * gamma[c] + static_cast<double>(beta[c]));
    }
  }
}
