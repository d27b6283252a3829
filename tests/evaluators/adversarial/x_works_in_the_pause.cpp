// Invented, against the supervisor's pause before each sample on a busy
// machine (kSettle, runner/time_mode.cc): once a sample's slots are
// prepared (its inputs final, its outputs poisoned) the supervisor sleeps
// 100 us before it sends the call, with the candidate's worker thawed. With
// threads allowed, a helper thread remembers the slots its calls were given
// and looks at them every 20 us, asleep in between; a slot whose output has
// just been poisoned (a NaN where it wrote a number) is computed there and
// then, outside any timed interval, and the timed call on that slot finds
// its answer written and returns at once. The supervisor's watch on the
// worker's CPU time while idle must catch it ("kept running after its calls
// returned"), or what it precomputes is bounded by that watch's slack and it
// is measured no faster than the honest kernel beyond the machine's noise.
// Rejected idle (82.5 ms of CPU time while idle in 250 ms) and beside three
// busy loops, the pause on (205 and 422 ms in 473 and 801 ms).
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace {

struct Slot {
  const float* x = nullptr;
  float* y = nullptr;
  int64_t n = 0;
  float a = 0;
  std::atomic<bool> done{false};  // computed by the helper since the poison
};

constexpr int kSlots = 256;
Slot slots[kSlots];
std::atomic<int> known{0};
std::mutex adding;

Slot* Find(float* y) {
  const int count = known.load(std::memory_order_acquire);
  for (int i = 0; i < count; ++i) {
    if (slots[i].y == y) return &slots[i];
  }
  return nullptr;
}

void Compute(const Slot& s) {
  for (int64_t i = 0; i < s.n; ++i) s.y[i] = s.a * s.x[i] + 1.0f;
}

void Helper() {
  for (;;) {
    std::this_thread::sleep_for(std::chrono::microseconds(20));
    const int count = known.load(std::memory_order_acquire);
    for (int i = 0; i < count; ++i) {
      Slot& s = slots[i];
      if (s.done.load(std::memory_order_acquire) || s.n <= 0) continue;
      // Poisoned since the last call: its inputs are final.
      if (!std::isnan(s.y[0]) || !std::isnan(s.y[s.n - 1])) continue;
      Compute(s);
      s.done.store(true, std::memory_order_release);
    }
  }
}

}  // namespace

void scale_add(const float* x, float* y, int64_t n, float a) {
  static std::once_flag started;
  std::call_once(started, [] { std::thread(Helper).detach(); });
  Slot* slot = Find(y);
  if (slot != nullptr && slot->x == x && slot->n == n && slot->a == a && slot->done.exchange(false) && n > 0 &&
      !std::isnan(y[0]) && !std::isnan(y[n - 1])) {
    return;  // the helper's answer, computed before the call
  }
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
  if (slot == nullptr) {
    std::lock_guard<std::mutex> lock(adding);
    const int count = known.load(std::memory_order_relaxed);
    if (Find(y) == nullptr && count < kSlots) {
      slots[count].x = x;
      slots[count].y = y;
      slots[count].n = n;
      slots[count].a = a;
      known.store(count + 1, std::memory_order_release);
    }
  } else {
    slot->x = x;
    slot->n = n;
    slot->a = a;
  }
}
