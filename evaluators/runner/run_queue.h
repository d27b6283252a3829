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

// What the run queue says of one timed sample: the worker's and the
// supervisor's waits for a CPU across it, the worker's CPU time in it, and
// the sample's seconds as timed.
struct SampleWaits {
  double worker_wait = 0;
  double supervisor_wait = 0;
  double worker_cpu = 0;
  double seconds = 0;
  // False where the kernel may run threads: its own threads can make its
  // worker wait (x_voids_slow_rounds), so that wait is not the machine's.
  bool count_worker_wait = true;
};

// The seconds a busy machine took from a sample: the worker's wait for a
// CPU, and the supervisor's beyond the worker's CPU time (on the core they
// share, the worker's call preempts the supervisor, which waits runnable
// meanwhile; what it waits beyond that is another task's: a late wake-up
// after the reply, a late send). Never more than the sample's seconds
// beyond the worker's CPU time: a process that had a CPU all along lost
// nothing to the machine.
double LostToBusyMachine(const SampleWaits& sample);

// Whether a busy machine took over `share` of a sample of `seconds`.
inline bool Disturbed(double lost_s, double seconds, double share) { return lost_s > share * seconds; }

}  // namespace kestrel::runner
