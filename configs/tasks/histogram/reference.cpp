// Reference histogram: one counter per byte value, incremented in order.
#include <cstdint>

void histogram(const uint8_t* data, int32_t* counts, int64_t n) {
  for (int v = 0; v < 256; ++v) counts[v] = 0;
  for (int64_t i = 0; i < n; ++i) counts[data[i]] += 1;
}
