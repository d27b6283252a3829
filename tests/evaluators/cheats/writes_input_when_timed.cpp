// Honest while it is checked, then writes into its input once it is timed
// (to leave the next call, or the reference, different data): the timed
// inputs are mapped read-only, so the write is a SIGSEGV: crashed.
#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  static int calls = 0;
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
  if (++calls > 20) const_cast<float*>(x)[0] = 0.0f;
}
