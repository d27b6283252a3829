// Histogram seed: counts[v] = number of bytes equal to v. Repeated values make
// consecutive increments of one counter wait on each other (a store, then a
// load of the same address); several sub-histograms break that chain.
//
// kestrel:knob COPIES 1 2 4 8
// kestrel:knob UNROLL 1 2 4 8
// kestrel:knob WIDE 0 1
//
// COPIES  sub-histograms, element i going to copy i % COPIES; summed at the end.
// UNROLL  elements per iteration of the main loop (at least COPIES).
// WIDE    0: one byte load per element; 1: eight bytes loaded at once as a
//         64-bit word and split by shifts (at least 8 elements per iteration).
#include <cstdint>
#include <cstring>

#ifndef COPIES
#define COPIES 1
#endif
#ifndef UNROLL
#define UNROLL 1
#endif
#ifndef WIDE
#define WIDE 0
#endif

void histogram(const uint8_t* data, int32_t* counts, int64_t n) {
  int32_t sub[COPIES][256];
  std::memset(sub, 0, sizeof(sub));
  int64_t i = 0;
  constexpr int64_t kStep = UNROLL > COPIES ? UNROLL : COPIES;
#if WIDE
  constexpr int64_t kWideStep = kStep < 8 ? 8 : kStep;
  for (; i + kWideStep <= n; i += kWideStep) {
    for (int64_t w = 0; w < kWideStep; w += 8) {
      uint64_t word;
      std::memcpy(&word, data + i + w, 8);
      for (int b = 0; b < 8; ++b) sub[(w + b) % COPIES][(word >> (8 * b)) & 0xFF] += 1;
    }
  }
#else
  for (; i + kStep <= n; i += kStep) {
    for (int u = 0; u < kStep; ++u) sub[u % COPIES][data[i + u]] += 1;
  }
#endif
  for (; i < n; ++i) sub[0][data[i]] += 1;
  for (int v = 0; v < 256; ++v) {
    int32_t total = 0;
    for (int c = 0; c < COPIES; ++c) total += sub[c][v];
    counts[v] = total;
  }
}
