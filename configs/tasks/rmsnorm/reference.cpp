// Reference RMS normalization in double:
//   inv = 1 / sqrt(sum(x^2) / cols + 1e-6), y = x * inv * w.
#include <cmath>
#include <cstdint>

void rmsnorm(const float* x, const float* w, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * cols;
    float* out = y + r * cols;
    double squares = 0.0;
    for (int64_t c = 0; c < cols; ++c) squares += static_cast<double>(in[c]) * static_cast<double>(in[c]);
    const double inv = 1.0 / std::sqrt(squares / static_cast<double>(cols) + 1e-6);
    for (int64_t c = 0; c < cols; ++c) out[c] = static_cast<float>(static_cast<double>(in[c]) * inv * static_cast<double>(w[c]));
  }
}
