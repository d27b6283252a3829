// The cache-friendly transpose of the profile ladder: 16 x 16 tiles, whose
// rows of both matrices stay in L1 while the tile is done.
#include <algorithm>
#include <cstdint>

void transpose(const float* in, float* out, int64_t n) {
  constexpr int64_t kTile = 16;
  for (int64_t ii = 0; ii < n; ii += kTile) {
    for (int64_t jj = 0; jj < n; jj += kTile) {
      const int64_t i_end = std::min(ii + kTile, n), j_end = std::min(jj + kTile, n);
      for (int64_t i = ii; i < i_end; ++i) {
        for (int64_t j = jj; j < j_end; ++j) out[j * n + i] = in[i * n + j];
      }
    }
  }
}
