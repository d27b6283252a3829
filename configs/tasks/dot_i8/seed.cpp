// int8 dot-product seed: int32 accumulators.
//
// kestrel:knob ACC 1 2 4 8 16 32 64 128
// kestrel:knob ROWS 1 2 3 4
//
// ACC  independent int32 lanes per row (lets the compiler use wide multiplies).
// ROWS rows computed together, sharing each load of b.
#include <cstdint>

#ifndef ACC
#define ACC 1
#endif
#ifndef ROWS
#define ROWS 1
#endif

void dot_i8(const int8_t* a, const int8_t* b, int32_t* out, int64_t rows, int64_t n) {
  int64_t r = 0;
  for (; r + ROWS <= rows; r += ROWS) {
    int32_t lanes[ROWS][ACC] = {};
    int64_t c = 0;
    for (; c + ACC <= n; c += ACC) {
      for (int q = 0; q < ROWS; ++q) {
        for (int u = 0; u < ACC; ++u) lanes[q][u] += static_cast<int32_t>(a[(r + q) * n + c + u]) * b[c + u];
      }
    }
    for (int q = 0; q < ROWS; ++q) {
      int32_t sum = 0;
      for (int u = 0; u < ACC; ++u) sum += lanes[q][u];
      for (int64_t t = c; t < n; ++t) sum += static_cast<int32_t>(a[(r + q) * n + t]) * b[t];
      out[r + q] = sum;
    }
  }
  for (; r < rows; ++r) {
    int32_t sum = 0;
    for (int64_t c = 0; c < n; ++c) sum += static_cast<int32_t>(a[r * n + c]) * b[c];
    out[r] = sum;
  }
}
