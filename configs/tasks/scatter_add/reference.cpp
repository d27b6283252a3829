// Reference scatter-add: sums in double in index order, rounded once.
#include <cstddef>
#include <cstdint>
#include <vector>

void scatter_add(const float* src, const int32_t* idx, float* out, int64_t n, int64_t d) {
  std::vector<double> sum(static_cast<size_t>(1024 * d), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) sum[static_cast<size_t>(idx[i] * d + j)] += src[i * d + j];
  }
  for (int64_t e = 0; e < 1024 * d; ++e) out[e] = static_cast<float>(sum[static_cast<size_t>(e)]);
}
