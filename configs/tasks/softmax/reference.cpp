// Reference softmax: for each row, y[j] = exp(x[j] - max) / sum_k exp(x[k] - max),
// computed in double and rounded once at the end.
#include <cmath>
#include <cstdint>

void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * cols;
    float* out = y + r * cols;
    double max = in[0];
    for (int64_t c = 1; c < cols; ++c) max = std::fmax(max, static_cast<double>(in[c]));
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) sum += std::exp(static_cast<double>(in[c]) - max);
    for (int64_t c = 0; c < cols; ++c) out[c] = static_cast<float>(std::exp(static_cast<double>(in[c]) - max) / sum);
  }
}
