// Attention-head seed: for each query row, float scores against every key,
// a softmax, then the probabilities times v accumulated into a float row.
//
// kestrel:knob WIDEN 0 1
// kestrel:knob ACC 1 2 3 4 5 6 7 8 12 16 24 32 48 64 128
//
// WIDEN 0: convert f16 to float where each element is used; 1: widen q, k and v
//          into float copies first.
// ACC   independent lanes in each score's dot product.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#ifndef WIDEN
#define WIDEN 0
#endif
#ifndef ACC
#define ACC 1
#endif

template <typename T>
static void Head(const T* q, const T* k, const T* v, _Float16* o, int64_t s, int64_t d) {
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  std::vector<float> p(static_cast<size_t>(s));
  std::vector<float> row(static_cast<size_t>(d));
  for (int64_t i = 0; i < s; ++i) {
    const T* qi = q + i * d;
    float max = -INFINITY;
    for (int64_t j = 0; j < s; ++j) {
      const T* kj = k + j * d;
      float lanes[ACC] = {};
      int64_t t = 0;
      for (; t + ACC <= d; t += ACC) {
        for (int u = 0; u < ACC; ++u) lanes[u] += static_cast<float>(qi[t + u]) * static_cast<float>(kj[t + u]);
      }
      for (; t < d; ++t) lanes[0] += static_cast<float>(qi[t]) * static_cast<float>(kj[t]);
      float dot = 0.0f;
      for (int u = 0; u < ACC; ++u) dot += lanes[u];
      p[static_cast<size_t>(j)] = dot * scale;
      max = p[static_cast<size_t>(j)] > max ? p[static_cast<size_t>(j)] : max;
    }
    float sum = 0.0f;
    for (int64_t j = 0; j < s; ++j) sum += p[static_cast<size_t>(j)] = std::exp(p[static_cast<size_t>(j)] - max);
    for (int64_t t = 0; t < d; ++t) row[static_cast<size_t>(t)] = 0.0f;
    for (int64_t j = 0; j < s; ++j) {
      const float pj = p[static_cast<size_t>(j)];
      for (int64_t t = 0; t < d; ++t) row[static_cast<size_t>(t)] += pj * static_cast<float>(v[j * d + t]);
    }
    const float inv = 1.0f / sum;
    for (int64_t t = 0; t < d; ++t) o[i * d + t] = static_cast<_Float16>(row[static_cast<size_t>(t)] * inv);
  }
}

void attention_head_f16(const _Float16* q, const _Float16* k, const _Float16* v, _Float16* o, int64_t s, int64_t d) {
#if WIDEN
  std::vector<float> fq(static_cast<size_t>(s * d)), fk(fq.size()), fv(fq.size());
  for (size_t e = 0; e < fq.size(); ++e) fq[e] = q[e], fk[e] = k[e], fv[e] = v[e];
  Head(fq.data(), fk.data(), fv.data(), o, s, d);
#else
  Head(q, k, v, o, s, d);
#endif
}
