// Argmax seed: ACC independent lanes each keep their maximum and its first
// index; lanes merge by value, then by the smaller index (ties go to the first).
//
// kestrel:knob ACC 1 2 3 4 5 6 7 8 12 16 24 32 48 64 128
// kestrel:knob TWO_PASS 0 1
//
// ACC      lanes (column c goes to lane c % ACC).
// TWO_PASS 0: track value and index together; 1: find the maximum value
//             first (vectorizes), then the first column that equals it.
#include <cstdint>

#ifndef ACC
#define ACC 1
#endif
#ifndef TWO_PASS
#define TWO_PASS 0
#endif

void argmax(const float* x, int32_t* out, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * cols;
#if TWO_PASS
    float lanes[ACC];
    for (int u = 0; u < ACC; ++u) lanes[u] = in[0];
    int64_t c = 0;
    for (; c + ACC <= cols; c += ACC) {
      for (int u = 0; u < ACC; ++u) lanes[u] = in[c + u] > lanes[u] ? in[c + u] : lanes[u];
    }
    for (; c < cols; ++c) lanes[0] = in[c] > lanes[0] ? in[c] : lanes[0];
    float max = lanes[0];
    for (int u = 1; u < ACC; ++u) max = lanes[u] > max ? lanes[u] : max;
    int64_t best = 0;
    while (in[best] != max) ++best;
#else
    float value[ACC];
    int64_t index[ACC];
    for (int u = 0; u < ACC; ++u) value[u] = in[0], index[u] = 0;
    int64_t c = 0;
    for (; c + ACC <= cols; c += ACC) {
      for (int u = 0; u < ACC; ++u) {
        if (in[c + u] > value[u]) value[u] = in[c + u], index[u] = c + u;
      }
    }
    for (; c < cols; ++c) {
      if (in[c] > value[0]) value[0] = in[c], index[0] = c;
    }
    int64_t best = index[0];
    float max = value[0];
    for (int u = 1; u < ACC; ++u) {
      if (value[u] > max || (value[u] == max && index[u] < best)) max = value[u], best = index[u];
    }
#endif
    out[r] = static_cast<int32_t>(best);
  }
}
