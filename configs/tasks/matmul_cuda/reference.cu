// Reference CUDA GEMM: c = a * b, row-major, one thread per element of c, a
// plain dot product accumulated in double. The entry is a host function;
// a, b and c are device pointers.
#include <cstdint>

__global__ void matmul_naive(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t i = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (i >= m || j >= n) return;
  double acc = 0.0;
  for (int64_t p = 0; p < k; ++p) acc += static_cast<double>(a[i * k + p]) * static_cast<double>(b[p * n + j]);
  c[i * n + j] = static_cast<float>(acc);
}

void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  if (m <= 0 || n <= 0) return;
  const dim3 threads(16, 16);
  const dim3 blocks(static_cast<unsigned>((n + 15) / 16), static_cast<unsigned>((m + 15) / 16));
  matmul_naive<<<blocks, threads>>>(a, b, c, m, n, k);
}
