// Reference pre-norm causal attention path, everything in double (the
// normalized rows, q, k, v and the attention output kept in double), the
// residual sum rounded once.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

using Matrix = std::vector<double>;

// out (s x d) = in (s x d) * w (d x d).
static Matrix Project(const Matrix& in, const float* w, int64_t s, int64_t d) {
  Matrix out(static_cast<size_t>(s * d), 0.0);
  for (int64_t i = 0; i < s; ++i) {
    for (int64_t p = 0; p < d; ++p) {
      const double v = in[static_cast<size_t>(i * d + p)];
      for (int64_t j = 0; j < d; ++j) out[static_cast<size_t>(i * d + j)] += v * w[p * d + j];
    }
  }
  return out;
}

void prenorm_attention(const float* x, const float* gamma, const float* beta, const float* wq, const float* wk,
                       const float* wv, const float* wo, float* y, int64_t s, int64_t d) {
  Matrix n(static_cast<size_t>(s * d));
  for (int64_t i = 0; i < s; ++i) {
    double sum = 0.0;
    for (int64_t c = 0; c < d; ++c) sum += x[i * d + c];
    const double mean = sum / static_cast<double>(d);
    double squares = 0.0;
    for (int64_t c = 0; c < d; ++c) squares += (x[i * d + c] - mean) * (x[i * d + c] - mean);
    const double inv_std = 1.0 / std::sqrt(squares / static_cast<double>(d) + 1e-5);
    for (int64_t c = 0; c < d; ++c) n[static_cast<size_t>(i * d + c)] = (x[i * d + c] - mean) * inv_std * gamma[c] + beta[c];
  }
  const Matrix q = Project(n, wq, s, d), k = Project(n, wk, s, d), v = Project(n, wv, s, d);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  Matrix a(static_cast<size_t>(s * d), 0.0);
  std::vector<double> p(static_cast<size_t>(s));
  for (int64_t i = 0; i < s; ++i) {
    double max = 0.0;
    for (int64_t j = 0; j <= i; ++j) {
      double dot = 0.0;
      for (int64_t c = 0; c < d; ++c) dot += q[static_cast<size_t>(i * d + c)] * k[static_cast<size_t>(j * d + c)];
      p[static_cast<size_t>(j)] = dot * scale;
      if (j == 0 || dot * scale > max) max = dot * scale;
    }
    double sum = 0.0;
    for (int64_t j = 0; j <= i; ++j) sum += p[static_cast<size_t>(j)] = std::exp(p[static_cast<size_t>(j)] - max);
    for (int64_t j = 0; j <= i; ++j) {
      for (int64_t c = 0; c < d; ++c) a[static_cast<size_t>(i * d + c)] += p[static_cast<size_t>(j)] / sum * v[static_cast<size_t>(j * d + c)];
    }
  }
  const Matrix out = Project(a, wo, s, d);
  for (int64_t e = 0; e < s * d; ++e) y[e] = static_cast<float>(static_cast<double>(x[e]) + out[static_cast<size_t>(e)]);
}
