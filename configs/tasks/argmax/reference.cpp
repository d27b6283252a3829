// Reference argmax: a strictly greater value moves the answer, so ties keep the first.
#include <cstdint>

void argmax(const float* x, int32_t* out, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * cols;
    int64_t best = 0;
    for (int64_t c = 1; c < cols; ++c) {
      if (in[c] > in[best]) best = c;
    }
    out[r] = static_cast<int32_t>(best);
  }
}
