// Runs /bin/true: rejected by the sandbox.
#include <unistd.h>

#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
  char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
  execv("/bin/true", argv);
}
