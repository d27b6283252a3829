// f16 -> bf16 seed: widen to float, scale, narrow with round to nearest even.
// A power-of-two scale keeps the float product exact; any other rounds twice
// (float, then bf16), at most an ulp of bf16 away.
//
// kestrel:knob UNROLL 1 2 3 4 5 6 7 8 12 16 24 32 48 64 128
// kestrel:knob NARROW 0 1
//
// UNROLL elements per inner step.
// NARROW 0: integer rounding on the float's bits; 1: the same without the NaN test
//           (the task's inputs are finite).
#include <cstdint>
#include <cstring>

#ifndef UNROLL
#define UNROLL 1
#endif
#ifndef NARROW
#define NARROW 0
#endif

static inline uint16_t Narrow(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
#if NARROW == 0
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);  // quiet NaN
#endif
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

void convert_f16_bf16(const _Float16* x, uint16_t* y, float scale, int64_t n) {
  int64_t i = 0;
  for (; i + UNROLL <= n; i += UNROLL) {
    for (int u = 0; u < UNROLL; ++u) y[i + u] = Narrow(static_cast<float>(x[i + u]) * scale);
  }
  for (; i < n; ++i) y[i] = Narrow(static_cast<float>(x[i]) * scale);
}
