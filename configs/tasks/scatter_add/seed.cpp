// Scatter-add seed: zeroes the output and adds each row where its index says.
//
// kestrel:knob ACC_DOUBLE 1 0
// kestrel:knob UNROLL 1 2 3 4 5 6 7 8 12 16 24 32 48 64 128
//
// ACC_DOUBLE 1: accumulate in a double buffer, rounded at the end; 0: add into out in float.
// UNROLL     columns added per inner step.
#include <cstddef>
#include <cstdint>
#include <vector>

#ifndef ACC_DOUBLE
#define ACC_DOUBLE 1
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

void scatter_add(const float* src, const int32_t* idx, float* out, int64_t n, int64_t d) {
#if ACC_DOUBLE
  std::vector<double> acc(static_cast<size_t>(1024 * d), 0.0);
  double* sum = acc.data();
#else
  float* sum = out;
#endif
  for (int64_t e = 0; e < 1024 * d; ++e) sum[e] = 0;
  for (int64_t i = 0; i < n; ++i) {
    auto* row = sum + static_cast<int64_t>(idx[i]) * d;
    const float* in = src + i * d;
    int64_t j = 0;
    for (; j + UNROLL <= d; j += UNROLL) {
      for (int u = 0; u < UNROLL; ++u) row[j + u] += in[j + u];
    }
    for (; j < d; ++j) row[j] += in[j];
  }
#if ACC_DOUBLE
  for (int64_t e = 0; e < 1024 * d; ++e) out[e] = static_cast<float>(sum[e]);
#endif
}
