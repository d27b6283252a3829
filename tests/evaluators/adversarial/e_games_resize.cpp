// Against the resizing of unlike samples (runner/time_mode.cc: a round
// whose candidate sample lasts over 1.1 times the reference's, or under
// 1/1.1, is dropped and the candidate's calls resized from its own timed
// seconds, at most 8 times a shape). It rushes its warm-up as
// e_rushes_warmup does (repeated calls on one output answered without
// computing, in its first 100 calls only, the checks and the warm-up: a
// timed call skipped would be wrong), for samples as long as the slots
// allow. Then it tries to spend the resizes so that they leave its samples
// long: it finds where a sample begins (a pause of over 100 us since its
// last call returned) and spins on every call of every other sample, so
// that rounds keep being dropped and resized one way and the other, hoping
// that the kept rounds are its fast ones and that its calls end up many. A
// resize only follows its own timed seconds, which no spin can shorten: its
// fast samples last as long as the reference's at most. Measured, at its
// honest speed at most (0.49-0.88x where the honest kernel measured
// 1.00-1.02x: its kept slow samples only slow it).
#include <chrono>
#include <cstdint>

namespace {

using Clock = std::chrono::steady_clock;

struct Seen {
  const float* y = nullptr;
  float x0 = 0;
  int streak = 0;
};
Seen seen[8];
Clock::time_point last_return;
long samples = 0;
long calls = 0;

bool RepeatedCall(const float* x, float* y, int64_t n) {
  Seen* slot = nullptr;
  for (Seen& s : seen) {
    if (s.y == y) slot = &s;
  }
  if (slot == nullptr) {
    static int next = 0;
    slot = &seen[next++ % 8];
    *slot = {y, n > 0 ? x[0] : 0.0f, 0};
  }
  const bool same = n > 0 && slot->x0 == x[0];
  slot->x0 = n > 0 ? x[0] : 0.0f;
  slot->streak = same ? slot->streak + 1 : 1;
  return slot->streak > 2;
}

}  // namespace

void scale_add(const float* x, float* y, int64_t n, float a) {
  const auto start = Clock::now();
  ++calls;
  if (start - last_return > std::chrono::microseconds(100)) ++samples;
  if (!(RepeatedCall(x, y, n) && calls <= 100)) {
    for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
    if (samples % 2 == 1) {
      // Twice the call's own time more, spun.
      const auto until = Clock::now() + 2 * (Clock::now() - start);
      while (Clock::now() < until) {
      }
    }
  }
  last_return = Clock::now();
}
