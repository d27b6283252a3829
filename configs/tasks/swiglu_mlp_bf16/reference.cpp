// Reference gated MLP: bf16 weights widened exactly, every sum and the gate
// in double, the residual sum rounded once.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

static double FromBf16(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

void swiglu_mlp_bf16(const float* x, const uint16_t* w1, const uint16_t* w3, const uint16_t* w2, float* y, int64_t t,
                     int64_t d, int64_t h) {
  std::vector<double> g(static_cast<size_t>(h)), u(static_cast<size_t>(h)), out(static_cast<size_t>(d));
  for (int64_t i = 0; i < t; ++i) {
    for (int64_t j = 0; j < h; ++j) g[static_cast<size_t>(j)] = u[static_cast<size_t>(j)] = 0.0;
    for (int64_t p = 0; p < d; ++p) {
      const double xv = x[i * d + p];
      for (int64_t j = 0; j < h; ++j) {
        g[static_cast<size_t>(j)] += xv * FromBf16(w1[p * h + j]);
        u[static_cast<size_t>(j)] += xv * FromBf16(w3[p * h + j]);
      }
    }
    for (int64_t c = 0; c < d; ++c) out[static_cast<size_t>(c)] = x[i * d + c];
    for (int64_t j = 0; j < h; ++j) {
      const double gv = g[static_cast<size_t>(j)];
      const double a = gv / (1.0 + std::exp(-gv)) * u[static_cast<size_t>(j)];
      for (int64_t c = 0; c < d; ++c) out[static_cast<size_t>(c)] += a * FromBf16(w2[j * d + c]);
    }
    for (int64_t c = 0; c < d; ++c) y[i * d + c] = static_cast<float>(out[static_cast<size_t>(c)]);
  }
}
