// Reference int8 dot products, accumulated in int64 and narrowed once (the
// task's sizes keep every sum within int32).
#include <cstdint>

void dot_i8(const int8_t* a, const int8_t* b, int32_t* out, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    int64_t sum = 0;
    for (int64_t c = 0; c < n; ++c) sum += static_cast<int64_t>(a[r * n + c]) * b[c];
    out[r] = static_cast<int32_t>(sum);
  }
}
