// Layer normalization seed: row statistics, then y = (x - mean) * inv_std *
// gamma + beta with inv_std = 1 / sqrt(var + 1e-5) (biased variance).
//
// kestrel:knob STATS 0 1 2
// kestrel:knob ACC 1 2 4 8 16 32
// kestrel:knob ACC_DOUBLE 1 0
//
// STATS      0: two passes (mean, then the sum of squared deviations);
//            1: one pass of Welford updates per lane, lanes merged with Chan's formula;
//            2: one pass of sum and sum of squares, var = E[x^2] - mean^2.
// ACC        independent accumulators (lanes) in the statistics loops.
// ACC_DOUBLE 1: statistics in double; 0: in float.
#include <cmath>
#include <cstdint>

#ifndef STATS
#define STATS 0
#endif
#ifndef ACC
#define ACC 1
#endif
#ifndef ACC_DOUBLE
#define ACC_DOUBLE 1
#endif

namespace {

#if ACC_DOUBLE
using Acc = double;
#else
using Acc = float;
#endif

struct Stats {
  Acc mean;
  Acc var;  // biased: sum of squared deviations / cols
};

Stats RowStats(const float* in, int64_t cols) {
  const int64_t body = cols - cols % ACC;  // handled in lanes; the rest in lane 0
#if STATS == 0
  Acc sum[ACC] = {};
  for (int64_t c = 0; c < body; c += ACC) {
    for (int u = 0; u < ACC; ++u) sum[u] += in[c + u];
  }
  for (int64_t c = body; c < cols; ++c) sum[0] += in[c];
  Acc total = 0;
  for (int u = 0; u < ACC; ++u) total += sum[u];
  const Acc mean = total / static_cast<Acc>(cols);
  Acc squares[ACC] = {};
  for (int64_t c = 0; c < body; c += ACC) {
    for (int u = 0; u < ACC; ++u) {
      const Acc d = in[c + u] - mean;
      squares[u] += d * d;
    }
  }
  for (int64_t c = body; c < cols; ++c) {
    const Acc d = in[c] - mean;
    squares[0] += d * d;
  }
  Acc total_squares = 0;
  for (int u = 0; u < ACC; ++u) total_squares += squares[u];
  return {mean, total_squares / static_cast<Acc>(cols)};
#elif STATS == 1
  // Every lane sees the same number of elements in the body, so one count serves all.
  Acc mean[ACC] = {};
  Acc m2[ACC] = {};
  Acc count = 0;
  for (int64_t c = 0; c < body; c += ACC) {
    count += 1;
    const Acc inv_count = Acc(1) / count;
    for (int u = 0; u < ACC; ++u) {
      const Acc delta = in[c + u] - mean[u];
      mean[u] += delta * inv_count;
      m2[u] += delta * (in[c + u] - mean[u]);
    }
  }
  // Merge the lanes (Chan et al.), then add the remainder one by one.
  Acc n = count;
  Acc total_mean = mean[0];
  Acc total_m2 = m2[0];
  for (int u = 1; u < ACC && count > 0; ++u) {
    const Acc merged = n + count;
    const Acc delta = mean[u] - total_mean;
    total_mean += delta * (count / merged);
    total_m2 += m2[u] + delta * delta * (n * count / merged);
    n = merged;
  }
  for (int64_t c = body; c < cols; ++c) {
    n += 1;
    const Acc delta = in[c] - total_mean;
    total_mean += delta / n;
    total_m2 += delta * (in[c] - total_mean);
  }
  return {total_mean, total_m2 / static_cast<Acc>(cols)};
#else
  Acc sum[ACC] = {};
  Acc squares[ACC] = {};
  for (int64_t c = 0; c < body; c += ACC) {
    for (int u = 0; u < ACC; ++u) {
      const Acc v = in[c + u];
      sum[u] += v;
      squares[u] += v * v;
    }
  }
  for (int64_t c = body; c < cols; ++c) {
    const Acc v = in[c];
    sum[0] += v;
    squares[0] += v * v;
  }
  Acc total = 0;
  Acc total_squares = 0;
  for (int u = 0; u < ACC; ++u) {
    total += sum[u];
    total_squares += squares[u];
  }
  const Acc mean = total / static_cast<Acc>(cols);
  const Acc var = total_squares / static_cast<Acc>(cols) - mean * mean;
  return {mean, var > 0 ? var : Acc(0)};
#endif
}

}  // namespace

void layernorm(const float* x, const float* gamma, const float* beta, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * cols;
    float* out = y + r * cols;
    const Stats stats = RowStats(in, cols);
    const float mean = static_cast<float>(stats.mean);
    const float inv_std = static_cast<float>(1.0 / std::sqrt(static_cast<double>(stats.var) + 1e-5));
    for (int64_t c = 0; c < cols; ++c) out[c] = (in[c] - mean) * inv_std * gamma[c] + beta[c];
  }
}
