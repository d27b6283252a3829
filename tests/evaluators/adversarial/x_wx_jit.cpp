// Invented, writes and runs its own machine code: maps memory writable and
// executable at once (W+X), writes a function into it and calls it, as a
// JIT or a self-modifying loader would; the arithmetic itself is honest.
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

void scale_add(const float* x, float* y, int64_t n, float a) {
  static int (*jitted)() = [] {
    void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    std::fprintf(stderr, "x_wx_jit: W+X page at %p\n", page);
    if (page == MAP_FAILED) return static_cast<int (*)()>(nullptr);
#if defined(__x86_64__)
    const unsigned char code[] = {0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3};  // mov eax, 1; ret
    std::memcpy(page, code, sizeof code);
    return reinterpret_cast<int (*)()>(page);
#else
    return static_cast<int (*)()>(nullptr);
#endif
  }();
  const float one = jitted != nullptr ? static_cast<float>(jitted()) : 1.0f;
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + one;
}
