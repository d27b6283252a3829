// conv1d + ReLU seed: accumulates each output row in float, tap by tap
// (a shifted multiply-add over the row), then bias and ReLU.
//
// kestrel:knob ORDER 0 1
// kestrel:knob UNROLL_O 1 2 3 4 5 6 7 8 10 12 16 20 24 32 64
//
// ORDER    0: for each output position, the dot product over (cin, taps);
//          1: for each (input channel, tap), add w * shifted input row to the output row.
// UNROLL_O output channels per pass (ORDER 1 only: they share the input row's loads).
#include <cstdint>

#ifndef ORDER
#define ORDER 0
#endif
#ifndef UNROLL_O
#define UNROLL_O 1
#endif

#if ORDER == 1
static void Channels(const float* x, const float* w, float* y, int64_t o0, int64_t count, int64_t cin, int64_t len,
                     int64_t taps) {
  const int64_t left = taps / 2;
  for (int64_t i = 0; i < cin; ++i) {
    for (int64_t j = 0; j < taps; ++j) {
      const int64_t shift = j - left;
      const int64_t t0 = shift < 0 ? -shift : 0;
      const int64_t t1 = len - shift < len ? len - shift : len;
      const float* in = x + i * len + shift;
      for (int64_t q = 0; q < count; ++q) {
        const float wv = w[((o0 + q) * cin + i) * taps + j];
        float* out = y + (o0 + q) * len;
        for (int64_t t = t0; t < t1; ++t) out[t] += wv * in[t];
      }
    }
  }
}
#endif

void conv1d_relu(const float* x, const float* w, const float* bias, float* y, int64_t cin, int64_t cout, int64_t len,
                 int64_t taps) {
#if ORDER == 0
  const int64_t left = taps / 2;
  for (int64_t o = 0; o < cout; ++o) {
    for (int64_t t = 0; t < len; ++t) {
      float v = 0.0f;
      for (int64_t i = 0; i < cin; ++i) {
        for (int64_t j = 0; j < taps; ++j) {
          const int64_t s = t + j - left;
          if (s >= 0 && s < len) v += w[(o * cin + i) * taps + j] * x[i * len + s];
        }
      }
      y[o * len + t] = v;
    }
  }
#else
  for (int64_t e = 0; e < cout * len; ++e) y[e] = 0.0f;
  int64_t o = 0;
  for (; o + UNROLL_O <= cout; o += UNROLL_O) Channels(x, w, y, o, UNROLL_O, cin, len, taps);
  if (o < cout) Channels(x, w, y, o, cout - o, cin, len, taps);
#endif
  for (int64_t c = 0; c < cout; ++c) {
    for (int64_t t = 0; t < len; ++t) {
      const float v = y[c * len + t] + bias[c];
      y[c * len + t] = v > 0.0f ? v : 0.0f;
    }
  }
}
