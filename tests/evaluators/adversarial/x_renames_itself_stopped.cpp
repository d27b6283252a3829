// Invented, against the freeze's look at the worker (WorkerProcess::Stopped
// reads "pid (comm) state ..." from /proc/PID/stat): the kernel renames
// itself so that its comm reads like a stopped process's fields, "x) T 1 1 1"
// (through /proc/self/comm, then prctl(PR_SET_NAME)), hoping a parser that
// takes the first ')' sees state T while it runs on after its reply. Must
// get: rejected by the sandbox (the allowlist refuses opening a file for
// writing and prctl); and the supervisor takes the last ')', which comm
// cannot move.
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  static bool renamed = false;
  if (!renamed) {
    renamed = true;
    static const char kName[] = "x) T 1 1 1";
    const int fd = open("/proc/self/comm", O_WRONLY);
    if (fd >= 0) {
      (void)!write(fd, kName, sizeof kName - 1);
      close(fd);
    }
    prctl(PR_SET_NAME, kName, 0, 0, 0);
  }
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
