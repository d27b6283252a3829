// Basic-block seed, in float: each convolution adds, for every (input
// channel, tap), a shifted image row times a weight into the output plane;
// borders are skipped by clipping each row's range.
//
// kestrel:knob UNROLL_O 1 2 3 4 5 6 7 8 9 10 11 12 13 14 16
// kestrel:knob ORDER 0 1
//
// UNROLL_O output channels per pass (they share the input row's loads).
// ORDER    0: taps outside, rows inside; 1: rows outside, taps inside.
#include <cstddef>
#include <cstdint>
#include <vector>

#ifndef UNROLL_O
#define UNROLL_O 1
#endif
#ifndef ORDER
#define ORDER 0
#endif

// Adds weight * in shifted by (di - 1, dj - 1) into out, for rows i.
static inline void Tap(const float* in, float* out, float weight, int64_t h, int64_t w, int64_t i, int64_t di,
                       int64_t dj) {
  const int64_t si = i + di - 1;
  if (si < 0 || si >= h) return;
  const int64_t j0 = dj == 0 ? 1 : 0;
  const int64_t j1 = dj == 2 ? w - 1 : w;
  const float* src = in + si * w + dj - 1;
  float* dst = out + i * w;
  for (int64_t j = j0; j < j1; ++j) dst[j] += weight * src[j];
}

static void Conv3x3(const float* in, const float* wt, const float* bias, float* out, int64_t c, int64_t h, int64_t w) {
  const int64_t plane = h * w;
  for (int64_t o = 0; o < c; ++o) {
    for (int64_t e = 0; e < plane; ++e) out[o * plane + e] = bias[o];
  }
  for (int64_t o0 = 0; o0 < c; o0 += UNROLL_O) {
    const int64_t count = o0 + UNROLL_O <= c ? UNROLL_O : c - o0;
    for (int64_t ci = 0; ci < c; ++ci) {
      const float* src = in + ci * plane;
#if ORDER == 0
      for (int64_t di = 0; di < 3; ++di) {
        for (int64_t dj = 0; dj < 3; ++dj) {
          for (int64_t q = 0; q < count; ++q) {
            const float weight = wt[(((o0 + q) * c + ci) * 3 + di) * 3 + dj];
            for (int64_t i = 0; i < h; ++i) Tap(src, out + (o0 + q) * plane, weight, h, w, i, di, dj);
          }
        }
      }
#else
      for (int64_t i = 0; i < h; ++i) {
        for (int64_t q = 0; q < count; ++q) {
          for (int64_t di = 0; di < 3; ++di) {
            for (int64_t dj = 0; dj < 3; ++dj) {
              Tap(src, out + (o0 + q) * plane, wt[(((o0 + q) * c + ci) * 3 + di) * 3 + dj], h, w, i, di, dj);
            }
          }
        }
      }
#endif
    }
  }
}

void resnet_block(const float* x, const float* w1, const float* b1, const float* w2, const float* b2, float* y,
                  int64_t c, int64_t h, int64_t w) {
  std::vector<float> z(static_cast<size_t>(c * h * w));
  Conv3x3(x, w1, b1, z.data(), c, h, w);
  for (auto& v : z) v = v > 0.0f ? v : 0.0f;
  Conv3x3(z.data(), w2, b2, y, c, h, w);
  for (int64_t e = 0; e < c * h * w; ++e) {
    const float v = y[e] + x[e];
    y[e] = v > 0.0f ? v : 0.0f;
  }
}
