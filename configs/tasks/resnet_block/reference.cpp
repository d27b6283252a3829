// Reference basic block: both convolutions in double, the intermediate z
// kept in double, y rounded once.
#include <cstddef>
#include <cstdint>
#include <vector>

// out[o][i][j] = bias[o] + sum over (ci, di, dj) of wt[o][ci][di][dj] * in[ci][i+di-1][j+dj-1].
template <typename T>
static std::vector<double> Conv3x3(const T* in, const float* wt, const float* bias, int64_t c, int64_t h, int64_t w) {
  std::vector<double> out(static_cast<size_t>(c * h * w));
  for (int64_t o = 0; o < c; ++o) {
    for (int64_t i = 0; i < h; ++i) {
      for (int64_t j = 0; j < w; ++j) {
        double v = bias[o];
        for (int64_t ci = 0; ci < c; ++ci) {
          for (int64_t di = 0; di < 3; ++di) {
            for (int64_t dj = 0; dj < 3; ++dj) {
              const int64_t si = i + di - 1, sj = j + dj - 1;
              if (si < 0 || si >= h || sj < 0 || sj >= w) continue;
              v += static_cast<double>(wt[((o * c + ci) * 3 + di) * 3 + dj]) * static_cast<double>(in[(ci * h + si) * w + sj]);
            }
          }
        }
        out[static_cast<size_t>((o * h + i) * w + j)] = v;
      }
    }
  }
  return out;
}

void resnet_block(const float* x, const float* w1, const float* b1, const float* w2, const float* b2, float* y,
                  int64_t c, int64_t h, int64_t w) {
  std::vector<double> z = Conv3x3(x, w1, b1, c, h, w);
  for (auto& v : z) v = v > 0.0 ? v : 0.0;
  const std::vector<double> second = Conv3x3(z.data(), w2, b2, c, h, w);
  for (int64_t e = 0; e < c * h * w; ++e) {
    const double v = second[static_cast<size_t>(e)] + x[e];
    y[e] = static_cast<float>(v > 0.0 ? v : 0.0);
  }
}
