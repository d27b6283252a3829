// Allocates 64 GiB and touches it: crashed (the address-space limit).
#include <cstdint>
#include <cstdlib>
#include <cstring>

void scale_add(const float* x, float* y, int64_t n, float a) {
  const std::size_t bytes = std::size_t{64} << 30;
  char* block = static_cast<char*>(std::malloc(bytes));
  std::memset(block, 1, bytes);  // a null block faults here
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f + static_cast<float>(block[i] - 1);
  std::free(block);
}
