// Reference transpose: out[c][r] = in[r][c], row by row of the input.
#include <cstdint>

void transpose(const float* in, float* out, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
  }
}
