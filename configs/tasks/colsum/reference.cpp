// Reference column sums: out[c] = sum_r x[r][c], one column at a time,
// accumulated in double and rounded once.
#include <cstdint>

void colsum(const float* x, float* out, int64_t rows, int64_t cols) {
  for (int64_t c = 0; c < cols; ++c) {
    double sum = 0.0;
    for (int64_t r = 0; r < rows; ++r) sum += static_cast<double>(x[r * cols + c]);
    out[c] = static_cast<float>(sum);
  }
}
