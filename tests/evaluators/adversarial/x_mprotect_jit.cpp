// Invented, against the baseline's JIT allowance (Job::allow_jit): a
// candidate that asks for what only a baseline may have, writable and
// executable memory, by mprotect and pkey_mprotect of an ordinary page
// rather than by mmap (x_wx_jit); the arithmetic itself is honest.
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

void scale_add(const float* x, float* y, int64_t n, float a) {
  static int (*jitted)() = [] {
    void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return static_cast<int (*)()>(nullptr);
#if defined(__x86_64__)
    const unsigned char code[] = {0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3};  // mov eax, 1; ret
    std::memcpy(page, code, sizeof code);
    const int rwx = PROT_READ | PROT_WRITE | PROT_EXEC;
    const long by_pkey = syscall(SYS_pkey_mprotect, page, 4096, rwx, 0);
    const int by_mprotect = mprotect(page, 4096, rwx);
    std::fprintf(stderr, "x_mprotect_jit: pkey_mprotect %ld, mprotect %d\n", by_pkey, by_mprotect);
    if (by_mprotect != 0) return static_cast<int (*)()>(nullptr);
    return reinterpret_cast<int (*)()>(page);
#else
    return static_cast<int (*)()>(nullptr);
#endif
  }();
  const float one = jitted != nullptr ? static_cast<float>(jitted()) : 1.0f;
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + one;
}
