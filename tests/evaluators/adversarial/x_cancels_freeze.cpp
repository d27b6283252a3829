// Invented, against the supervisor's freeze (threads allowed): a thread
// that sends its own process SIGCONT over and over (a signal to itself is
// allowed), so that the SIGSTOP the supervisor sends after a sample is
// discarded before every thread has stopped, while the kernel's calls are
// honest. A kernel that cannot be frozen cannot be checked: it must not be
// measured.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <thread>

void scale_add(const float* x, float* y, int64_t n, float a) {
  static bool started = false;
  if (!started) {
    started = true;
    std::thread([] {
      for (;;) {
        ::kill(::getpid(), SIGCONT);
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    }).detach();
  }
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
