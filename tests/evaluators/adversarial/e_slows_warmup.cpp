// Against the sampling plan: spins for 2 ms on each of its first 20 calls
// (the checks and the warm-up), so that the supervisor's estimate of its
// seconds per call is far too high, hoping for samples of one call where
// the control channel's round trip would flatter the reference or itself.
// The plan only sizes samples; every sample is timed by the supervisor.
// Measured, at its honest speed at most.
#include <chrono>
#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  static int calls = 0;
  if (++calls <= 20) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
    while (std::chrono::steady_clock::now() < until) {
    }
  }
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
