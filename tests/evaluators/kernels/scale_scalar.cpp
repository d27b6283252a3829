// The profile ladder's scalar rung: y[i] = a * x[i] + 1 with the vectorizer off.
#include <cstdint>

__attribute__((optimize("no-tree-vectorize"))) void scale_add(const float* x, float* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
