// Forks a helper process: rejected by the sandbox.
#include <unistd.h>

#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  if (fork() == 0) _exit(0);
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
