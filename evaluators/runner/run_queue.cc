#include "evaluators/runner/run_queue.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace kestrel::runner {
namespace {

// "<ns on a CPU> <ns waiting for one> <time slices>"; all zero where the
// kernel keeps no scheduler statistics. (The first field of a running
// thread is only brought up to date at the scheduler's next event: a
// young thread may read 0 there.)
double WaitIn(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char text[128];
  const ssize_t got = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (got <= 0) return -1;
  text[got] = '\0';
  unsigned long long on_cpu = 0, waiting = 0, slices = 0;
  if (std::sscanf(text, "%llu %llu %llu", &on_cpu, &waiting, &slices) != 3) return -1;
  if (on_cpu == 0 && waiting == 0 && slices == 0) return -1;
  return static_cast<double>(waiting) * 1e-9;
}

}  // namespace

double RunQueueSeconds(pid_t pid) {
  if (pid <= 0) return -1;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/schedstat", static_cast<int>(pid));
  return WaitIn(path);
}

double OwnRunQueueSeconds() { return WaitIn("/proc/thread-self/schedstat"); }

double LostToBusyMachine(const SampleWaits& sample) {
  const double worker = sample.count_worker_wait ? std::max(0.0, sample.worker_wait) : 0;
  const double supervisor = std::max(0.0, sample.supervisor_wait - sample.worker_cpu);
  return std::min(worker + supervisor, std::max(0.0, sample.seconds - sample.worker_cpu));
}

}  // namespace kestrel::runner
