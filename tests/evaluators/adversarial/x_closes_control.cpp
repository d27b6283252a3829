// Invented, against the supervisor/worker split: closes the worker's control
// socket (fd 3) and both shared regions' descriptors it can guess, then
// returns: the supervisor must not wait for good, nor take the silence for
// a result.
#include <unistd.h>

#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
  for (int fd = 3; fd < 8; ++fd) close(fd);
}
