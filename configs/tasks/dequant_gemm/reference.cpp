// Reference dequantize + GEMM: every product in double, rounded once.
#include <cstdint>

void dequant_gemm(const float* a, const int8_t* b, const float* scale, float* c, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double v = 0.0;
      for (int64_t p = 0; p < k; ++p) v += static_cast<double>(a[i * k + p]) * (static_cast<double>(b[p * n + j]) * scale[j]);
      c[i * n + j] = static_cast<float>(v);
    }
  }
}
