// Gather seed: copies each indexed row.
//
// kestrel:knob COPY 0 1
// kestrel:knob PREFETCH 0 1 2 3 4 6 8 12 16 24 32 48 64 96 128
//
// COPY     0: an element loop the compiler may vectorize; 1: std::memcpy per row.
// PREFETCH rows ahead whose table row is prefetched (0: none).
#include <cstddef>
#include <cstdint>
#include <cstring>

#ifndef COPY
#define COPY 0
#endif
#ifndef PREFETCH
#define PREFETCH 0
#endif

void gather(const float* table, const int32_t* idx, float* out, int64_t n, int64_t d) {
  for (int64_t i = 0; i < n; ++i) {
#if PREFETCH
    if (i + PREFETCH < n) __builtin_prefetch(table + static_cast<int64_t>(idx[i + PREFETCH]) * d);
#endif
    const float* row = table + static_cast<int64_t>(idx[i]) * d;
#if COPY
    std::memcpy(out + i * d, row, static_cast<size_t>(d) * sizeof(float));
#else
    for (int64_t j = 0; j < d; ++j) out[i * d + j] = row[j];
#endif
  }
}
