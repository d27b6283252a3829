// Opens a socket (to phone home): rejected by the sandbox.
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd >= 0) close(fd);
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
