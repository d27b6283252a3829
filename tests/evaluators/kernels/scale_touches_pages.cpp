// Right, and on every call it also maps 64 fresh pages, writes one byte of
// each and unmaps them: 64 page faults per call, which the kernel's
// software counters see on any machine (event_counters_test counts them).
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  constexpr std::size_t kPages = 64;
  constexpr std::size_t kPage = 4096;
  void* pages = mmap(nullptr, kPages * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pages != MAP_FAILED) {
    volatile char* bytes = static_cast<char*>(pages);
    for (std::size_t p = 0; p < kPages; ++p) bytes[p * kPage] = 1;
    munmap(pages, kPages * kPage);
  }
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
