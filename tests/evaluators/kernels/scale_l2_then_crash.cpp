// Every element within the elementwise tolerance but spending 90% of it
// (so the relative L2 bound fails), and crashing once its checks are over
// (12 calls: 2 shapes x 3 input sets x 2 calls): the checks are complete,
// the runner's elementwise test passes and it is timed, where it crashes.
// It must be reported wrong (the checks come first), not crashed.
#include <cmath>
#include <cstdint>

static int calls = 0;

void scale_add(const float* x, float* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) {
    const float exact = a * x[i] + 1.0f;
    y[i] = exact + 0.9f * (1e-6f + 1e-5f * std::fabs(exact));
  }
  if (++calls > 12) {
    volatile float* nowhere = nullptr;
    *nowhere = 1.0f;
  }
}
