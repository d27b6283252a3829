// Expert baseline: OpenBLAS's single-precision GEMM (row-major, no
// transposes), single-threaded (the runner sets OPENBLAS_NUM_THREADS to the
// evaluator's thread count). What a hand-written kernel is measured against.
#include <cblas.h>

#include <cstdint>

void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
              1.0f, a, static_cast<int>(k), b, static_cast<int>(n), 0.0f, c, static_cast<int>(n));
}
