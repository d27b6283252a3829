// Recurses forever: crashed by SIGSEGV (stack overflow).
#include <cstdint>

static int Recurse(volatile int depth) {
  volatile char frame[256];
  frame[0] = static_cast<char>(depth);
  return Recurse(depth + 1) + frame[0];
}

void scale_add(const float* x, float* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
  y[0] += static_cast<float>(Recurse(0));
}
