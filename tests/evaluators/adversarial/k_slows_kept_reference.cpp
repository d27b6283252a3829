// Against the kept supervisor's estimate of the reference's seconds per call
// (evaluators/runner/time_mode.cc, Timed::FastestSample): the next job sizes
// the reference's samples by it. Between its own calls the kernel spins in
// a 1 ms SIGALRM handler (0.9 ms of every tick), competing for the CPU with
// the reference's samples in every round, so that this job's reference
// samples look slow and the next candidate's reference samples hold too few
// calls (each then carries more of the control channel's round trip, which
// flatters the next candidate). Must get: rejected by the sandbox (the
// allowlist refuses setitimer; with threads allowed instead, the candidate
// is frozen through the reference's samples), and the next kernel's
// reference samples sized as they would have been.
#include <signal.h>
#include <sys/time.h>
#include <time.h>

#include <cstdint>

static volatile sig_atomic_t in_call = 0;

static long NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void Spin(int) {
  if (in_call) return;
  const long until = NowNs() + 900000;
  while (NowNs() < until && !in_call) {
  }
}

void scale_add(const float* x, float* y, int64_t n, float a) {
  static bool armed = false;
  if (!armed) {
    armed = true;
    struct sigaction action {};
    action.sa_handler = Spin;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGALRM, &action, nullptr);
    itimerval every{{0, 1000}, {0, 1000}};
    setitimer(ITIMER_REAL, &every, nullptr);
  }
  in_call = 1;
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
  in_call = 0;
}
