// Invented, beside x_requests_amx: the other arch_prctl requests stay
// refused. ARCH_SET_CPUID 0 makes the cpuid instruction fault in this
// process; nothing a kernel needs, and a call the allowlist does not know.
// Must be rejected, naming the sandbox.
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace {
constexpr long kArchSetCpuid = 0x1012;
}  // namespace

void scale_add(const float* x, float* y, int64_t n, float a) {
  syscall(SYS_arch_prctl, kArchSetCpuid, 0);
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
