// Not an attack: what oneDNN does on an AMX host (Sapphire Rapids and
// later) before its first tile instruction, asking the kernel for the tile
// state with arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA). The
// allowlist lets these requests through (the expert baselines that use
// oneDNN were rejected on such hosts when it did not); any other arch_prctl
// is refused (x_sets_cpuid_faulting). Measured at its honest speed, with or
// without AMX on the host (without, the request fails and nothing else
// happens).
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace {
constexpr long kArchGetXcompPerm = 0x1022;
constexpr long kArchReqXcompPerm = 0x1023;
constexpr long kXfeatureXtiledata = 18;
}  // namespace

void scale_add(const float* x, float* y, int64_t n, float a) {
  unsigned long features = 0;
  syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata);
  syscall(SYS_arch_prctl, kArchGetXcompPerm, &features);
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
