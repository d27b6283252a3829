// Invented, against the allowlist's restart_syscall (admitted so that a
// sleep stopped and continued by the supervisor's freeze resumes): called
// directly, with no interrupted call to resume, it can only fail (EINTR).
// The kernel is otherwise honest: it must be measured as such.
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  for (int k = 0; k < 4; ++k) ::syscall(SYS_restart_syscall);
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
