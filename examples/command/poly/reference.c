/* Reference: Horner's rule in double, the coefficients 1/(k+1) computed as
   they are used. Plain and obviously correct. */
#include <stdint.h>

void poly(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    double acc = 0.0;
    for (int k = 15; k >= 0; --k) acc = acc * (double)x[i] + 1.0 / (double)(k + 1);
    y[i] = (float)acc;
  }
}
