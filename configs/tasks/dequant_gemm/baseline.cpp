// Expert baseline: dequantize the int8 weights into a float buffer, then
// OpenBLAS's sgemm (single-threaded: the runner sets OPENBLAS_NUM_THREADS).
// The dequantization is part of every call, as it is for the kernel.
#include <cblas.h>

#include <cstddef>
#include <cstdint>
#include <vector>

void dequant_gemm(const float* a, const int8_t* b, const float* scale, float* c, int64_t m, int64_t n, int64_t k) {
  std::vector<float> wide(static_cast<size_t>(k * n));
  for (int64_t p = 0; p < k; ++p) {
    for (int64_t j = 0; j < n; ++j) wide[static_cast<size_t>(p * n + j)] = static_cast<float>(b[p * n + j]) * scale[j];
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
              1.0f, a, static_cast<int>(k), wide.data(), static_cast<int>(n), 0.0f, c, static_cast<int>(n));
}
