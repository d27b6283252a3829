// Off by 80% of the elementwise tolerance on every element (as a lower
// precision would be): each element passes, the relative L2 bound does not.
#include <cmath>
#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) {
    const float exact = a * x[i] + 1.0f;
    y[i] = static_cast<float>(exact + 0.8 * (1e-6 + 1e-5 * std::fabs(exact)));
  }
}
