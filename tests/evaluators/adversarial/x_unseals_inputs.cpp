// Invented, against the read-only input sets: finds its input's mapping and
// tries to make it writable (mprotect), to change the data the reference is
// timed on next; then computes honestly. While its outputs are checked the
// inputs are its own copy, and the write is seen ("modified its input");
// while it is timed they are a sealed memfd: mprotect to PROT_WRITE fails.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  const long page = sysconf(_SC_PAGESIZE);
  void* start = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(x) / page * page);
  if (mprotect(start, static_cast<size_t>(n) * sizeof(float), PROT_READ | PROT_WRITE) == 0) {
    const_cast<float*>(x)[n - 1] = 0.0f;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
