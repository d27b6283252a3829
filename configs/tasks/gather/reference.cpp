// Reference gather: one row copied per index, element by element.
#include <cstdint>

void gather(const float* table, const int32_t* idx, float* out, int64_t n, int64_t d) {
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) out[i * d + j] = table[static_cast<int64_t>(idx[i]) * d + j];
  }
}
