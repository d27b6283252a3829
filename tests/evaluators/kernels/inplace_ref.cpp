// The in-place task's reference: y[i] = f(y[i]), f a 32-step affine
// iteration (enough work per element that answering from a memo pays).
#include <cstdint>

void scale_inplace(float* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) {
    float v = y[i];
    for (int r = 0; r < 32; ++r) v = a * v + 0.001f;
    y[i] = v;
  }
}
