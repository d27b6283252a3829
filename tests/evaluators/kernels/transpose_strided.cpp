// The transpose the profile ladder calls strided (and the task's reference):
// reads rows, writes columns, one cache line per element written.
#include <cstdint>

void transpose(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) out[j * n + i] = in[i * n + j];
  }
}
