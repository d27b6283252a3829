// Correct, with C linkage and a knob: measured.
// kestrel:knob UNROLL 1 2 4
#include <cstdint>

#ifndef UNROLL
#error "UNROLL must be defined by the evaluator"
#endif

extern "C" void scale_add(const float* x, float* y, int64_t n, float a) {
  int64_t i = 0;
  for (; i + UNROLL <= n; i += UNROLL) {
    for (int u = 0; u < UNROLL; ++u) y[i + u] = a * x[i + u] + 1.0f;
  }
  for (; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
