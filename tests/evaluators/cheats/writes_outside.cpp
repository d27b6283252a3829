// Writes a file outside its directory: rejected by the sandbox.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

void scale_add(const float* x, float* y, int64_t n, float a) {
  const std::string path = "/tmp/kestrel-cheat-" + std::to_string(getpid());
  if (FILE* file = std::fopen(path.c_str(), "w")) {
    std::fputs("cheat\n", file);
    std::fclose(file);
  }
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
