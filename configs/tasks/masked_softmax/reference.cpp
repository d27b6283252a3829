// Reference scaled, masked softmax in double: only entries with mask 1 take
// part; the others are 0, and so is every entry of a row with none kept.
#include <cmath>
#include <cstdint>

void masked_softmax(const float* x, const uint8_t* mask, float* y, float scale, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * cols;
    const uint8_t* keep = mask + r * cols;
    float* out = y + r * cols;
    bool any = false;
    double max = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      if (!keep[c]) continue;
      const double s = static_cast<double>(in[c]) * scale;
      if (!any || s > max) max = s;
      any = true;
    }
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      if (keep[c]) sum += std::exp(static_cast<double>(in[c]) * scale - max);
    }
    for (int64_t c = 0; c < cols; ++c) {
      out[c] = keep[c] ? static_cast<float>(std::exp(static_cast<double>(in[c]) * scale - max) / sum) : 0.0f;
    }
  }
}
