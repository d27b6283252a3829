// Reads its (uninitialised) output before writing it: wrong, non-deterministic.
#include <cstdint>
#include <cstring>

void scale_add(const float* x, float* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &y[i], sizeof bits);
    y[i] = a * x[i] + 1.0f + 1e-3f * static_cast<float>(bits & 1u);
  }
}
