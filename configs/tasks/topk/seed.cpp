// Top-k seed: one pass per row keeping a sorted buffer of the best k so far;
// a new element enters only if strictly greater than the buffer's last
// (columns come in increasing order, so an equal later value ranks after).
//
// kestrel:knob SEARCH 0 1
// kestrel:knob GATE 1 0
// kestrel:knob PREFETCH 0 1 2 4 8 16 32 64
//
// SEARCH 0: find the insertion point by a linear scan from the end; 1: by binary search.
// GATE   1: compare against the current k-th value before anything else; 0: always search.
// PREFETCH cache lines (16 floats) ahead of the scan that are prefetched (0: none).
#include <cstdint>

#ifndef SEARCH
#define SEARCH 0
#endif
#ifndef GATE
#define GATE 1
#endif
#ifndef PREFETCH
#define PREFETCH 0
#endif

void topk(const float* x, float* values, int32_t* indices, int64_t rows, int64_t cols, int64_t k) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * cols;
    float* v = values + r * k;
    int32_t* id = indices + r * k;
    int64_t size = 0;
    for (int64_t c = 0; c < cols; ++c) {
#if PREFETCH
      if (c % 16 == 0) __builtin_prefetch(in + c + PREFETCH * 16);  // a hint: never faults
#endif
      const float value = in[c];
#if GATE
      if (size == k && !(value > v[k - 1])) continue;
#endif
      // Position: after every element >= value.
#if SEARCH
      int64_t lo = 0, hi = size;
      while (lo < hi) {
        const int64_t mid = (lo + hi) / 2;
        if (v[mid] >= value) lo = mid + 1; else hi = mid;
      }
      int64_t pos = lo;
#else
      int64_t pos = size;
      while (pos > 0 && v[pos - 1] < value) --pos;
#endif
      if (pos >= k) continue;
      const int64_t last = size < k ? size : k - 1;
      for (int64_t m = last; m > pos; --m) v[m] = v[m - 1], id[m] = id[m - 1];
      v[pos] = value;
      id[pos] = static_cast<int32_t>(c);
      if (size < k) ++size;
    }
  }
}
