// Invented (issue 18's hardware counters): a kernel that wants its profile
// to show fewer instructions and misses than it costs. The supervisor counts
// it with perf events opened on the worker's pid; this kernel looks for the
// counters among its own descriptors and, on every call, asks each one to
// stop and to reset (PERF_EVENT_IOC_DISABLE, PERF_EVENT_IOC_RESET). It holds
// none of them, and the allowlist answers every ioctl with ENOTTY. Otherwise
// it is right, and maps, touches and unmaps 64 fresh pages per call, so its
// count is known: event_counters_test checks the supervisor still counts
// every one of them. Must be measured at its honest speed.
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  for (int fd = 0; fd < 256; ++fd) {
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    ioctl(fd, PERF_EVENT_IOC_RESET, 0);
  }
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
