// Pre-norm causal attention seed, in float: layernorm into a buffer, the
// three projections, causal scores and softmax per query row, the weighted
// sum of v, and the output projection added onto x.
//
// kestrel:knob QKV 0 1
// kestrel:knob ACC 1 2 3 4 5 6 7 8 12 16 24 32 48 64 128
//
// QKV 0: three separate projections; 1: one pass over each normalized row
//        computing q, k and v together (the row stays in registers/cache).
// ACC independent lanes in each score's dot product.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#ifndef QKV
#define QKV 0
#endif
#ifndef ACC
#define ACC 1
#endif

// out (s x d) (+)= in (s x d) * w (d x d).
static void Project(const float* in, const float* w, float* out, int64_t s, int64_t d, bool accumulate) {
  for (int64_t i = 0; i < s; ++i) {
    float* row = out + i * d;
    if (!accumulate) {
      for (int64_t j = 0; j < d; ++j) row[j] = 0.0f;
    }
    for (int64_t p = 0; p < d; ++p) {
      const float v = in[i * d + p];
      for (int64_t j = 0; j < d; ++j) row[j] += v * w[p * d + j];
    }
  }
}

void prenorm_attention(const float* x, const float* gamma, const float* beta, const float* wq, const float* wk,
                       const float* wv, const float* wo, float* y, int64_t s, int64_t d) {
  const size_t size = static_cast<size_t>(s * d);
  std::vector<float> n(size), q(size), k(size), v(size), a(size, 0.0f), p(static_cast<size_t>(s));
  for (int64_t i = 0; i < s; ++i) {
    double sum = 0.0, squares = 0.0;
    for (int64_t c = 0; c < d; ++c) sum += x[i * d + c];
    const double mean = sum / static_cast<double>(d);
    for (int64_t c = 0; c < d; ++c) squares += (x[i * d + c] - mean) * (x[i * d + c] - mean);
    const float inv_std = static_cast<float>(1.0 / std::sqrt(squares / static_cast<double>(d) + 1e-5));
    for (int64_t c = 0; c < d; ++c) n[static_cast<size_t>(i * d + c)] = (x[i * d + c] - static_cast<float>(mean)) * inv_std * gamma[c] + beta[c];
  }
#if QKV
  for (size_t e = 0; e < size; ++e) q[e] = k[e] = v[e] = 0.0f;
  for (int64_t i = 0; i < s; ++i) {
    for (int64_t c = 0; c < d; ++c) {
      const float nv = n[static_cast<size_t>(i * d + c)];
      for (int64_t j = 0; j < d; ++j) {
        q[static_cast<size_t>(i * d + j)] += nv * wq[c * d + j];
        k[static_cast<size_t>(i * d + j)] += nv * wk[c * d + j];
        v[static_cast<size_t>(i * d + j)] += nv * wv[c * d + j];
      }
    }
  }
#else
  Project(n.data(), wq, q.data(), s, d, false);
  Project(n.data(), wk, k.data(), s, d, false);
  Project(n.data(), wv, v.data(), s, d, false);
#endif
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  for (int64_t i = 0; i < s; ++i) {
    float max = -INFINITY;
    for (int64_t j = 0; j <= i; ++j) {
      float lanes[ACC] = {};
      int64_t c = 0;
      for (; c + ACC <= d; c += ACC) {
        for (int u = 0; u < ACC; ++u) lanes[u] += q[static_cast<size_t>(i * d + c + u)] * k[static_cast<size_t>(j * d + c + u)];
      }
      for (; c < d; ++c) lanes[0] += q[static_cast<size_t>(i * d + c)] * k[static_cast<size_t>(j * d + c)];
      float dot = 0.0f;
      for (int u = 0; u < ACC; ++u) dot += lanes[u];
      p[static_cast<size_t>(j)] = dot * scale;
      max = p[static_cast<size_t>(j)] > max ? p[static_cast<size_t>(j)] : max;
    }
    float sum = 0.0f;
    for (int64_t j = 0; j <= i; ++j) sum += p[static_cast<size_t>(j)] = std::exp(p[static_cast<size_t>(j)] - max);
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j <= i; ++j) {
      const float pj = p[static_cast<size_t>(j)] * inv;
      for (int64_t c = 0; c < d; ++c) a[static_cast<size_t>(i * d + c)] += pj * v[static_cast<size_t>(j * d + c)];
    }
  }
  for (int64_t e = 0; e < s * d; ++e) y[e] = x[e];
  Project(a.data(), wo, y, s, d, true);
}
