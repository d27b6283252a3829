// Invented (issue 18's hardware counters): prctl(PR_TASK_PERF_EVENTS_DISABLE)
// stops every perf counter attached to the calling process, whoever opened
// it, so a kernel could blank the counts its supervisor takes of it. prctl
// is outside the worker's allowlist: the kernel must be rejected, naming
// the sandbox, and a counting job of it returns no counts at all
// (event_counters_test), never the stopped ones.
#include <sys/prctl.h>

#include <cstdint>

void scale_add(const float* x, float* y, int64_t n, float a) {
  prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0);
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
