#include "core/hidden_shapes.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>

namespace kestrel {
namespace {

std::uint64_t SplitMix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Log-uniform in [lo, hi], rounded to an integer within it.
std::int64_t DrawSize(std::mt19937_64& generator, std::int64_t lo, std::int64_t hi) {
  if (lo >= hi) return lo;
  std::uniform_real_distribution<double> unit(std::log(static_cast<double>(lo)),
                                              std::log(static_cast<double>(hi) + 1.0));
  const auto size = static_cast<std::int64_t>(std::floor(std::exp(unit(generator))));
  return std::clamp(size, lo, hi);
}

}  // namespace

std::uint64_t BufferBytes(const Task& task, const Shape& shape) {
  std::uint64_t bytes = 0;
  for (const ArgSpec& arg : task.args) {
    if (arg.IsBuffer()) bytes += static_cast<std::uint64_t>(task.ElementCount(arg, shape)) * SizeOf(arg.type);
  }
  return bytes;
}

std::uint64_t HiddenShapeSeed(std::uint64_t measure_seed, std::uint64_t salt) {
  return SplitMix(SplitMix(measure_seed ^ 0x68696464656E5348ULL) ^ salt);
}

std::vector<Shape> DrawHiddenShapes(const Task& task, std::uint64_t seed, int count) {
  std::vector<Shape> drawn;
  if (task.shape_ranges.empty() || task.shapes.empty()) return drawn;
  std::uint64_t budget = 0;
  for (const Shape& shape : task.shapes) budget = std::max(budget, BufferBytes(task, shape));
  const auto known = [&](const Shape& shape) {
    return std::find(task.shapes.begin(), task.shapes.end(), shape) != task.shapes.end() ||
           std::find(task.check_shapes.begin(), task.check_shapes.end(), shape) != task.check_shapes.end() ||
           std::find(drawn.begin(), drawn.end(), shape) != drawn.end();
  };
  std::mt19937_64 generator(seed);
  constexpr int kTries = 16;
  for (int i = 0; i < count; ++i) {
    std::optional<Shape> smallest;
    for (int attempt = 0; attempt < kTries; ++attempt) {
      Shape shape = task.shapes.front();
      for (const auto& [dim, range] : task.shape_ranges) shape[dim] = DrawSize(generator, range.first, range.second);
      if (known(shape)) continue;
      if (!smallest || BufferBytes(task, shape) < BufferBytes(task, *smallest)) smallest = shape;
      if (BufferBytes(task, shape) <= budget) break;
    }
    if (smallest) drawn.push_back(*smallest);
  }
  return drawn;
}

}  // namespace kestrel
