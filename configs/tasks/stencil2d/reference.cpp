// Reference 5-point stencil with zero outside the grid, in double:
//   out[i][j] = c0*in[i][j] + c1*(north + south + west + east).
#include <cstdint>

void stencil2d(const float* in, float* out, float c0, float c1, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      const double north = i > 0 ? in[(i - 1) * cols + j] : 0.0;
      const double south = i + 1 < rows ? in[(i + 1) * cols + j] : 0.0;
      const double west = j > 0 ? in[i * cols + j - 1] : 0.0;
      const double east = j + 1 < cols ? in[i * cols + j + 1] : 0.0;
      const double centre = in[i * cols + j];
      out[i * cols + j] = static_cast<float>(static_cast<double>(c0) * centre +
                                             static_cast<double>(c1) * (north + south + west + east));
    }
  }
}
