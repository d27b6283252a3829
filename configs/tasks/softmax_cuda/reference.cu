// Reference CUDA softmax: one thread per row, three plain passes (max, sum of
// exponentials, scale), accumulated in double and rounded once at the end.
// The entry is a host function; x and y are device pointers.
#include <cstdint>

__global__ void softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* in = x + r * cols;
  float* out = y + r * cols;
  double max = in[0];
  for (int64_t c = 1; c < cols; ++c) max = fmax(max, static_cast<double>(in[c]));
  double sum = 0.0;
  for (int64_t c = 0; c < cols; ++c) sum += exp(static_cast<double>(in[c]) - max);
  for (int64_t c = 0; c < cols; ++c) out[c] = static_cast<float>(exp(static_cast<double>(in[c]) - max) / sum);
}

void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0) return;
  const int threads = 128;
  const int blocks = static_cast<int>((rows + threads - 1) / threads);
  softmax_rows<<<blocks, threads>>>(x, y, rows, cols);
}
