// Reference MLP block, one token at a time: the hidden row and the output
// row accumulated in double (row by row of the weights, which keeps the
// reads sequential), GELU in double, rounded once.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

void mlp_block(const float* x, const float* w1, const float* b1, const float* w2, const float* b2, float* y, int64_t t,
               int64_t d, int64_t h) {
  std::vector<double> hidden(static_cast<size_t>(h));
  std::vector<double> out(static_cast<size_t>(d));
  for (int64_t i = 0; i < t; ++i) {
    for (int64_t j = 0; j < h; ++j) hidden[static_cast<size_t>(j)] = b1[j];
    for (int64_t p = 0; p < d; ++p) {
      const double xv = x[i * d + p];
      for (int64_t j = 0; j < h; ++j) hidden[static_cast<size_t>(j)] += xv * w1[p * h + j];
    }
    for (auto& v : hidden) v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    for (int64_t c = 0; c < d; ++c) out[static_cast<size_t>(c)] = b2[c];
    for (int64_t j = 0; j < h; ++j) {
      const double hv = hidden[static_cast<size_t>(j)];
      for (int64_t c = 0; c < d; ++c) out[static_cast<size_t>(c)] += hv * w2[j * d + c];
    }
    for (int64_t c = 0; c < d; ++c) y[i * d + c] = static_cast<float>(out[static_cast<size_t>(c)]);
  }
}
