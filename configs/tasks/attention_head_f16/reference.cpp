// Reference attention head: scores, softmax and the weighted sum of v in
// double, rounded once to binary16 (11 significant bits, nearest even).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

static _Float16 RoundToF16(double v) {
  if (v != 0 && std::isfinite(v)) {
    int e;
    std::frexp(v, &e);
    const int quantum = e - 11 > -24 ? e - 11 : -24;
    v = std::ldexp(std::nearbyint(std::ldexp(v, -quantum)), quantum);
  }
  return static_cast<_Float16>(v);  // exact, or infinity past f16's range
}

void attention_head_f16(const _Float16* q, const _Float16* k, const _Float16* v, _Float16* o, int64_t s, int64_t d) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<double> p(static_cast<size_t>(s));
  for (int64_t i = 0; i < s; ++i) {
    double max = 0.0;
    for (int64_t j = 0; j < s; ++j) {
      double dot = 0.0;
      for (int64_t t = 0; t < d; ++t) dot += static_cast<double>(q[i * d + t]) * static_cast<double>(k[j * d + t]);
      p[static_cast<size_t>(j)] = dot * scale;
      if (j == 0 || dot * scale > max) max = dot * scale;
    }
    double sum = 0.0;
    for (int64_t j = 0; j < s; ++j) sum += p[static_cast<size_t>(j)] = std::exp(p[static_cast<size_t>(j)] - max);
    for (int64_t t = 0; t < d; ++t) {
      double acc = 0.0;
      for (int64_t j = 0; j < s; ++j) acc += p[static_cast<size_t>(j)] * static_cast<double>(v[j * d + t]);
      o[i * d + t] = RoundToF16(acc / sum);
    }
  }
}
