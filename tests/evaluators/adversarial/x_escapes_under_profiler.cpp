// Invented, against kestrel-confine (evaluators/confine/denylist.h): the
// calls a kernel would make to leave the sandbox where no allowlist applies
// (a cachegrind run, a command harness, the CUDA runner): a new user
// namespace, the session keyring and userfaultfd (valgrind 3.19 stops at
// eBPF and io_uring calls with null arguments on its own). It aborts when any one of them works,
// so it is profiled only where every one is refused; under the measurement's
// allowlist the first is named and the kernel rejected. Computes honestly.
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

// SAFETY: every call asks for something new (a namespace, a keyring id, a
// descriptor); nothing outside the kernel's process is changed.
static bool Escaped() {
  if (syscall(SYS_unshare, CLONE_NEWUSER) == 0) return true;
  if (syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* session */, 0) >= 0) return true;
  if (syscall(SYS_userfaultfd, 0) >= 0) return true;
  return false;
}

__attribute__((constructor)) static void escape() {
  if (Escaped()) abort();
}

void scale_add(const float* x, float* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
