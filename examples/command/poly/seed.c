/* The first candidate: the reference's loop with knobs.
   TABLE   0: divide for each coefficient; 1: a precomputed table
   FLOAT   0: accumulate in double; 1: in float (twice the SIMD lanes)
   UNROLL  elements per iteration of the outer loop */
// kestrel:knob TABLE 0 1
// kestrel:knob FLOAT 0 1
// kestrel:knob UNROLL 1 2 4
#include <stdint.h>

#ifndef TABLE
#define TABLE 0
#endif
#ifndef FLOAT
#define FLOAT 0
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

#if FLOAT
typedef float acc_t;
#else
typedef double acc_t;
#endif

static const acc_t kCoeff[16] = {1.0 / 1,  1.0 / 2,  1.0 / 3,  1.0 / 4,  1.0 / 5,  1.0 / 6,  1.0 / 7,  1.0 / 8,
                                 1.0 / 9,  1.0 / 10, 1.0 / 11, 1.0 / 12, 1.0 / 13, 1.0 / 14, 1.0 / 15, 1.0 / 16};

static inline float one(float xi) {
  acc_t acc = 0;
  for (int k = 15; k >= 0; --k) {
#if TABLE
    acc = acc * (acc_t)xi + kCoeff[k];
#else
    acc = acc * (acc_t)xi + (acc_t)(1.0 / (double)(k + 1));
#endif
  }
  return (float)acc;
}

void poly(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + UNROLL <= n; i += UNROLL) {
    for (int u = 0; u < UNROLL; ++u) y[i + u] = one(x[i + u]);
  }
  for (; i < n; ++i) y[i] = one(x[i]);
}
