// Skips the work when called again on the same buffers (caching by
// pointer): wrong, the repeated call leaves the outputs poisoned.
#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  static const float* last_x = nullptr;
  static float* last_y = nullptr;
  if (x == last_x && y == last_y) return;
  last_x = x;
  last_y = y;
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
