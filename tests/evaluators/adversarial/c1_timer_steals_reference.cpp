// Class 1, steals the reference's time: arms a 1 ms interval timer whose
// SIGALRM handler busy-waits 0.6 ms, except while the kernel's own call is
// running. Whoever shares its process (the reference, the runner) loses
// most of its time to the handler; the kernel's own samples do not.
#include <signal.h>
#include <sys/time.h>
#include <time.h>

#include <cstdint>

static volatile sig_atomic_t in_call = 0;

static long NowNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void Steal(int) {
  if (in_call) return;
  const long until = NowNs() + 600000;
  while (NowNs() < until) {
  }
}

void scale_add(const float* x, float* y, int64_t n, float a) {
  static bool armed = false;
  if (!armed) {
    armed = true;
    struct sigaction action {};
    action.sa_handler = Steal;
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
