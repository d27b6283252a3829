// Reference top-k: k selection passes per row, each taking the largest
// element not yet taken (an equal value with a smaller index comes first).
#include <cstddef>
#include <cstdint>
#include <vector>

void topk(const float* x, float* values, int32_t* indices, int64_t rows, int64_t cols, int64_t k) {
  std::vector<char> taken(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * cols;
    taken.assign(static_cast<size_t>(cols), 0);
    for (int64_t j = 0; j < k; ++j) {
      int64_t best = -1;
      for (int64_t c = 0; c < cols; ++c) {
        if (taken[static_cast<size_t>(c)]) continue;
        if (best < 0 || in[c] > in[best]) best = c;
      }
      taken[static_cast<size_t>(best)] = 1;
      values[r * k + j] = in[best];
      indices[r * k + j] = static_cast<int32_t>(best);
    }
  }
}
