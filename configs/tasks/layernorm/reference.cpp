// Reference layer normalization over each row, in double:
//   mean = sum(x) / cols, var = sum((x - mean)^2) / cols (two passes),
//   y = (x - mean) / sqrt(var + 1e-5) * gamma + beta.
#include <cmath>
#include <cstdint>

void layernorm(const float* x, const float* gamma, const float* beta, float* y, int64_t rows, int64_t cols) {
  const double eps = 1e-5;
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * cols;
    float* out = y + r * cols;
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) sum += in[c];
    const double mean = sum / static_cast<double>(cols);
    double squares = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      const double d = in[c] - mean;
      squares += d * d;
    }
    const double inv_std = 1.0 / std::sqrt(squares / static_cast<double>(cols) + eps);
    for (int64_t c = 0; c < cols; ++c) {
      out[c] = static_cast<float>((in[c] - mean) * inv_std * static_cast<double>(gamma[c]) + static_cast<double>(beta[c]));
    }
  }
}
