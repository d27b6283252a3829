// Against the block-wise comparison's quick test (|out - ref| <= atol +
// rtol * |ref| over a block): one infinity and one NaN where the reference
// is finite, at a block's end and in its middle, everything else honest.
// A non-finite output where the reference is finite fails the element
// test however wide the tolerance: never measured.
#include <cmath>
#include <cstdint>
#include <limits>

void scale_add(const float* x, float* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
  if (n > 4095) y[4095] = std::numeric_limits<float>::infinity();
  if (n > 5000) y[5000] = std::nanf("");
}
