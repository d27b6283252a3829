#pragma once

// How long a thread has waited for a CPU: the run delay the kernel keeps
// per thread in /proc/PID/schedstat (with CONFIG_SCHED_INFO, as Debian's
// kernels have it). A thread waits while it is runnable and another task
// has its core; sleeping or blocking is not waiting. What the timing uses
// to tell a sample a busy machine took time from (time_mode.cc).

#include <sys/types.h>

namespace kestrel::runner {

// Seconds process `pid`'s main thread has waited for a CPU since it
// started; -1 when unknown (no such process, or no scheduler statistics).
double RunQueueSeconds(pid_t pid);

// The same for the calling thread.
double OwnRunQueueSeconds();

}  // namespace kestrel::runner
