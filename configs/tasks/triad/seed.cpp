// Triad seed: z = a * x + y, a pure stream (two loads and one store per element).
//
// kestrel:knob UNROLL 1 2 4 8 16
// kestrel:knob STORE 0 1
// kestrel:knob PREFETCH 0 64 256 1024
//
// UNROLL   elements per iteration of the main loop (the rest one by one).
// STORE    0: ordinary stores (the line of z is read for ownership first);
//          1: non-temporal (streaming) stores of z once it is 32-byte aligned,
//             which skip that read but also bypass the cache.
// PREFETCH software prefetch distance in elements for x and y (0: none).
#include <cstdint>
#if defined(__AVX__) && defined(__FMA__)
#include <immintrin.h>
#endif

#ifndef UNROLL
#define UNROLL 1
#endif
#ifndef STORE
#define STORE 0
#endif
#ifndef PREFETCH
#define PREFETCH 0
#endif

void triad(const float* x, const float* y, float* z, float a, int64_t n) {
  int64_t i = 0;
#if STORE && defined(__AVX__) && defined(__FMA__)
  // Scalar head until z is 32-byte aligned, then 8 lanes per streaming store.
  while (i < n && (reinterpret_cast<uintptr_t>(z + i) & 31) != 0) {
    z[i] = a * x[i] + y[i];
    ++i;
  }
  const __m256 va = _mm256_set1_ps(a);
  constexpr int64_t kStep = 8 * (UNROLL < 2 ? 1 : UNROLL / 2);
  for (; i + kStep <= n; i += kStep) {
#if PREFETCH
    __builtin_prefetch(x + i + PREFETCH);
    __builtin_prefetch(y + i + PREFETCH);
#endif
    for (int64_t u = 0; u < kStep; u += 8) {
      const __m256 vx = _mm256_loadu_ps(x + i + u);
      const __m256 vy = _mm256_loadu_ps(y + i + u);
      _mm256_stream_ps(z + i + u, _mm256_fmadd_ps(va, vx, vy));
    }
  }
  _mm_sfence();
#else
  for (; i + UNROLL <= n; i += UNROLL) {
#if PREFETCH
    __builtin_prefetch(x + i + PREFETCH);
    __builtin_prefetch(y + i + PREFETCH);
#endif
    for (int u = 0; u < UNROLL; ++u) z[i + u] = a * x[i + u] + y[i + u];
  }
#endif
  for (; i < n; ++i) z[i] = a * x[i] + y[i];
}
