// Reference conv1d + bias + ReLU: each output in double, rounded once.
#include <cstdint>

void conv1d_relu(const float* x, const float* w, const float* bias, float* y, int64_t cin, int64_t cout, int64_t len,
                 int64_t taps) {
  const int64_t left = taps / 2;
  for (int64_t o = 0; o < cout; ++o) {
    for (int64_t t = 0; t < len; ++t) {
      double v = bias[o];
      for (int64_t i = 0; i < cin; ++i) {
        for (int64_t j = 0; j < taps; ++j) {
          const int64_t s = t + j - left;
          if (s >= 0 && s < len) v += static_cast<double>(w[(o * cin + i) * taps + j]) * x[i * len + s];
        }
      }
      y[o * len + t] = static_cast<float>(v > 0.0 ? v : 0.0);
    }
  }
}
