// Right on its first call only (hidden state): wrong, non-deterministic.
#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  static int calls = 0;
  const float offset = calls++ == 0 ? 0.0f : 1e-3f;
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f + offset;
}
