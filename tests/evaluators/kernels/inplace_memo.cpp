// Class 2 on a task whose only argument is an inout: a memo keyed on the
// buffer's address, n and three of its elements answers a call whose inout
// starts as an earlier call's did (the supervisor restores inouts before
// every call) with a memcpy instead of the work. With inouts perturbed
// every round like inputs, the memo's answer is stale at the perturbed
// elements: wrong, or measured at the honest speed.
#include <cstdint>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

void scale_inplace(float* y, int64_t n, float a) {
  using Key = std::tuple<const float*, int64_t, float, float, float, float>;
  static std::map<Key, std::vector<float>> memo;
  const Key key{y, n, a, y[0], y[n / 3], y[n - 1]};
  if (auto found = memo.find(key); found != memo.end()) {
    std::memcpy(y, found->second.data(), static_cast<size_t>(n) * sizeof(float));
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    float v = y[i];
    for (int r = 0; r < 32; ++r) v = a * v + 0.001f;
    y[i] = v;
  }
  memo[key].assign(y, y + n);
}
