// Reference residual add + RMSNorm: h rounded to float as stored; the norm
// computed in double from the stored h, rounded once.
#include <cmath>
#include <cstdint>

void add_rmsnorm(const float* x, const float* res, const float* w, float* h, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    double squares = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      const float sum = x[r * cols + c] + res[r * cols + c];
      h[r * cols + c] = sum;
      squares += static_cast<double>(sum) * sum;
    }
    const double inv = 1.0 / std::sqrt(squares / static_cast<double>(cols) + 1e-6);
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = static_cast<float>(static_cast<double>(h[r * cols + c]) * inv * w[c]);
  }
}
