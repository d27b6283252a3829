// Reference SwiGLU gate on f16: in double, rounded once to binary16 (11
// significant bits, nearest even, subnormals kept).
#include <cmath>
#include <cstdint>

static _Float16 RoundToF16(double v) {
  if (v != 0 && std::isfinite(v)) {
    int e;
    std::frexp(v, &e);
    const int quantum = e - 11 > -24 ? e - 11 : -24;
    v = std::ldexp(std::nearbyint(std::ldexp(v, -quantum)), quantum);
  }
  return static_cast<_Float16>(v);  // exact, or infinity past f16's range
}

void silu_mul_f16(const _Float16* g, const _Float16* u, _Float16* y, int64_t rows, int64_t cols) {
  for (int64_t e = 0; e < rows * cols; ++e) {
    const double v = static_cast<double>(g[e]);
    y[e] = RoundToF16(v / (1.0 + std::exp(-v)) * static_cast<double>(u[e]));
  }
}
