// The profile ladder's intrinsic rung: the widest vectors this CPU has
// (AVX-512, else AVX2 with FMA), one FMA per vector, and a scalar tail.
#include <immintrin.h>

#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  int64_t i = 0;
#if defined(__AVX512F__)
  const __m512 va = _mm512_set1_ps(a), one = _mm512_set1_ps(1.0f);
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_fmadd_ps(va, _mm512_loadu_ps(x + i), one));
#elif defined(__AVX2__) && defined(__FMA__)
  const __m256 va = _mm256_set1_ps(a), one = _mm256_set1_ps(1.0f);
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), one));
#endif
  for (; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
