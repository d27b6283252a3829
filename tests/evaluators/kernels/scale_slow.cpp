// Right, and about a hundred times slower than the reference (the same
// loop, repeated): for the sampling plan, which must not keep it sampled
// for several times min_time while the fast reference gathers its own.
#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  for (int repeat = 0; repeat < 100; ++repeat) {
    for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
    asm volatile("" : : "r"(y) : "memory");  // each repetition really writes y
  }
}
