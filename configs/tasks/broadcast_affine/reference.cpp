// Reference broadcast affine, in double, rounded once.
#include <cstdint>

void broadcast_affine(const float* x, const float* scale, const float* shift, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      y[r * cols + c] = static_cast<float>(static_cast<double>(x[r * cols + c]) * scale[c] + static_cast<double>(shift[r]));
    }
  }
}
