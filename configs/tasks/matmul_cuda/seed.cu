// GEMM seed (CUDA): c = a * b, row-major, tiled through shared memory. A
// block of TILE x (TILE / WPT) threads computes a TILE x TILE tile of c; each
// thread computes WPT elements of one column of it. The entry is a host
// function; a, b and c are device pointers.
//
// kestrel:knob TILE 16 8 32
// kestrel:knob WPT 1 2 4 8
// kestrel:knob PAD 0 1
// kestrel:knob UNROLL 1 0
//
// TILE    the tile edge (elements); TILE x TILE tiles of a and b in shared memory.
// WPT     elements of c per thread (rows of the tile); WPT <= TILE.
// PAD     1: pad each shared-memory row by one float (fewer bank conflicts).
// UNROLL  1: unroll the inner product over the tile.
#include <cstdint>

#ifndef TILE
#define TILE 16
#endif
#ifndef WPT
#define WPT 1
#endif
#ifndef PAD
#define PAD 0
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

#if WPT > TILE
#error "WPT must not exceed TILE"
#endif

__global__ void matmul_tiled(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  constexpr int kRowsPerPass = TILE / WPT;
  __shared__ float as[TILE][TILE + PAD];
  __shared__ float bs[TILE][TILE + PAD];
  const int tx = threadIdx.x;  // column within the tile
  const int ty = threadIdx.y;  // first row within the tile
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * TILE;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * TILE + tx;

  float acc[WPT];
  for (int w = 0; w < WPT; ++w) acc[w] = 0.0f;

  for (int64_t p0 = 0; p0 < k; p0 += TILE) {
    for (int w = 0; w < WPT; ++w) {
      const int r = ty + w * kRowsPerPass;
      const int64_t ar = row0 + r;
      const int64_t ac = p0 + tx;
      as[r][tx] = (ar < m && ac < k) ? a[ar * k + ac] : 0.0f;
      const int64_t br = p0 + r;
      bs[r][tx] = (br < k && col < n) ? b[br * n + col] : 0.0f;
    }
    __syncthreads();
#if UNROLL
#pragma unroll
#endif
    for (int p = 0; p < TILE; ++p) {
      const float bv = bs[p][tx];
      for (int w = 0; w < WPT; ++w) acc[w] += as[ty + w * kRowsPerPass][p] * bv;
    }
    __syncthreads();
  }
  for (int w = 0; w < WPT; ++w) {
    const int64_t row = row0 + ty + w * kRowsPerPass;
    if (row < m && col < n) c[row * n + col] = acc[w];
  }
}

void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  if (m <= 0 || n <= 0) return;
  const dim3 threads(TILE, TILE / WPT);
  const dim3 blocks(static_cast<unsigned>((n + TILE - 1) / TILE), static_cast<unsigned>((m + TILE - 1) / TILE));
  matmul_tiled<<<blocks, threads>>>(a, b, c, m, n, k);
}
