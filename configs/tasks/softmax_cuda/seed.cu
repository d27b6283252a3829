// Softmax seed (CUDA): one thread block per row; the block's threads stride
// over the row and combine their partial max and sum by a shared-memory tree
// reduction. The entry is a host function; x and y are device pointers.
//
// kestrel:knob BLOCK 256 128 512 1024
// kestrel:knob FAST_EXP 0 1
// kestrel:knob STORE_EXP 0 1
// kestrel:knob ACC_DOUBLE 0 1
//
// BLOCK      threads per block (one block per row); a power of two.
// FAST_EXP   0: expf; 1: __expf (the fast hardware approximation).
// STORE_EXP  0: recompute exp in the last pass; 1: store exp(x - max) in y
//               in the second pass and rescale it in the third.
// ACC_DOUBLE 1: accumulate the sum of exponentials in double; 0: in float.
#include <cstdint>

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef FAST_EXP
#define FAST_EXP 0
#endif
#ifndef STORE_EXP
#define STORE_EXP 0
#endif
#ifndef ACC_DOUBLE
#define ACC_DOUBLE 0
#endif

#if ACC_DOUBLE
typedef double Acc;
#else
typedef float Acc;
#endif

__device__ __forceinline__ float seed_exp(float v) {
#if FAST_EXP
  return __expf(v);
#else
  return expf(v);
#endif
}

__global__ void __launch_bounds__(BLOCK) softmax_block_per_row(const float* x, float* y, int64_t cols) {
  __shared__ float max_part[BLOCK];
  __shared__ Acc sum_part[BLOCK];
  const float* in = x + static_cast<int64_t>(blockIdx.x) * cols;
  float* out = y + static_cast<int64_t>(blockIdx.x) * cols;
  const int t = threadIdx.x;

  float m = -INFINITY;
  for (int64_t c = t; c < cols; c += BLOCK) m = fmaxf(m, in[c]);
  max_part[t] = m;
  __syncthreads();
  for (int half = BLOCK / 2; half > 0; half /= 2) {
    if (t < half) max_part[t] = fmaxf(max_part[t], max_part[t + half]);
    __syncthreads();
  }
  const float max = max_part[0];

  Acc s = 0;
  for (int64_t c = t; c < cols; c += BLOCK) {
    const float e = seed_exp(in[c] - max);
#if STORE_EXP
    out[c] = e;
#endif
    s += e;
  }
  sum_part[t] = s;
  __syncthreads();
  for (int half = BLOCK / 2; half > 0; half /= 2) {
    if (t < half) sum_part[t] += sum_part[t + half];
    __syncthreads();
  }
  const float inv = static_cast<float>(Acc(1) / sum_part[0]);

  for (int64_t c = t; c < cols; c += BLOCK) {
#if STORE_EXP
    out[c] *= inv;
#else
    out[c] = seed_exp(in[c] - max) * inv;
#endif
  }
}

void softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0) return;
  softmax_block_per_row<<<static_cast<unsigned>(rows), BLOCK>>>(x, y, cols);
}
