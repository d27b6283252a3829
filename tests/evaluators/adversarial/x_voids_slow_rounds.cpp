// Invented, against the retakes of rounds a busy machine disturbed
// (runner/time_mode.cc): with threads allowed, a kernel that is slow in
// most samples (here, by its own coin, two in three, three times the work: as a
// data-dependent kernel is on some inputs) makes exactly those samples look
// disturbed, so that they are dropped and only its fast samples are kept.
// In a slow sample a helper thread pinned to the calling thread's core (the
// calling thread pinned there too) spins
// through each call, so that the calling thread waits for a CPU (the run
// delay the supervisor reads), and each call then sleeps half as long again,
// so that the process uses less CPU time than the sample's seconds. The
// worker's wait is not counted with threads allowed: its slow samples are
// kept, and it is measured as what it is.
#include <sched.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <random>
#include <thread>

using Clock = std::chrono::steady_clock;

namespace {

std::atomic<int> spin_on{-1};  // the core to spin on while a slow call runs; -1: none
std::mutex mutex;
std::condition_variable slow_call;

void Helper() {
  int pinned = -1;
  volatile unsigned long spins = 0;
  for (;;) {
    {
      // Asleep (no CPU time while idle) until a slow call.
      std::unique_lock<std::mutex> lock(mutex);
      slow_call.wait(lock, [] { return spin_on.load() >= 0; });
    }
    const int core = spin_on.load(std::memory_order_relaxed);
    if (core < 0) continue;
    if (core != pinned) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(core, &one);
      (void)::sched_setaffinity(0, sizeof one, &one);
      pinned = core;
    }
    spins = spins + 1;
  }
}

}  // namespace

void scale_add(const float* x, float* y, int64_t n, float a) {
  static bool started = false;
  static Clock::time_point last_return;
  static bool slow = false;
  static std::mt19937 coin(12345);
  if (!started) {
    started = true;
    std::thread(Helper).detach();
  }
  const auto start = Clock::now();
  // A gap of over 0.2 ms since the last call returned: a new sample.
  if (start - last_return > std::chrono::microseconds(200)) slow = coin() % 3 != 0;
  const int passes = slow ? 3 : 1;
  if (slow) {
    // Both threads on this core, so that neither moves to another.
    const int core = ::sched_getcpu();
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(core, &one);
    (void)::sched_setaffinity(0, sizeof one, &one);
    {
      std::lock_guard<std::mutex> lock(mutex);
      spin_on.store(core);
    }
    slow_call.notify_one();
  }
  for (int pass = 0; pass < passes; ++pass) {
    for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
  }
  if (slow) {
    // Its work took W of CPU in 2W (the helper had the core half the
    // time); asleep for W more: a third of the call waiting, a third
    // beyond the process's CPU time.
    std::this_thread::sleep_for((Clock::now() - start) / 2);
    spin_on.store(-1, std::memory_order_relaxed);
  }
  last_return = Clock::now();
}
