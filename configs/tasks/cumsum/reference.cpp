// Reference inclusive prefix sum of each row, accumulated in double.
#include <cstdint>

void cumsum(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      sum += static_cast<double>(x[r * cols + c]);
      y[r * cols + c] = static_cast<float>(sum);
    }
  }
}
