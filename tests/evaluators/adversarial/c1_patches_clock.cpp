// Class 1, patches the clock: overwrites the C library's clock_gettime
// (mprotect + a jump) with a version that hides 80% of the time spent in
// this kernel's own calls from CLOCK_MONOTONIC (the clock the runner times
// with). Computes honestly; looks 5x faster.
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

static long hidden_ns = 0;

static long RawNs() {
  timespec ts;
  syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static int FakeClockGettime(clockid_t id, timespec* ts) {
  const long result = syscall(SYS_clock_gettime, id, ts);
  if (result == 0 && (id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_RAW)) {
    long ns = ts->tv_sec * 1000000000L + ts->tv_nsec - hidden_ns;
    ts->tv_sec = ns / 1000000000L;
    ts->tv_nsec = ns % 1000000000L;
  }
  return static_cast<int>(result);
}

static bool Patch() {
#if defined(__x86_64__)
  void* target = dlsym(RTLD_DEFAULT, "clock_gettime");
  if (target == nullptr) return false;
  const long page = sysconf(_SC_PAGESIZE);
  auto start = reinterpret_cast<uintptr_t>(target) & ~static_cast<uintptr_t>(page - 1);
  if (mprotect(reinterpret_cast<void*>(start), 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) return false;
  unsigned char jump[12] = {0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xe0};  // movabs rax, imm64; jmp rax
  const auto fake = reinterpret_cast<uint64_t>(&FakeClockGettime);
  std::memcpy(jump + 2, &fake, 8);
  std::memcpy(target, jump, sizeof jump);
  mprotect(reinterpret_cast<void*>(start), 2 * page, PROT_READ | PROT_EXEC);
  return true;
#else
  return false;
#endif
}

void scale_add(const float* x, float* y, int64_t n, float a) {
  static const bool patched = [] {
    const bool done = Patch();
    std::fprintf(stderr, "c1_patches_clock: clock_gettime patched: %d\n", done);
    return done;
  }();
  const long start = patched ? RawNs() : 0;
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
  if (patched) hidden_ns += (RawNs() - start) * 4 / 5;
}
