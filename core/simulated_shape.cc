#include "core/simulated_shape.h"

#include <algorithm>
#include <optional>
#include <string>

#include "core/hidden_shapes.h"

namespace kestrel {
namespace {

double BufferElements(const Task& task, const Shape& shape) {
  double elements = 0;
  for (const ArgSpec& arg : task.args) {
    if (arg.IsBuffer()) elements += static_cast<double>(task.ElementCount(arg, shape));
  }
  return elements;
}

double Work(const Task& task, const Shape& shape) {
  return std::max(task.Flops(shape).value_or(0.0), BufferElements(task, shape));
}

// The first dim of the first buffer argument's shape that has a range.
std::optional<std::string> OutermostRangedDim(const Task& task) {
  for (const ArgSpec& arg : task.args) {
    if (!arg.IsBuffer()) continue;
    for (const std::string& dim : arg.shape) {
      if (task.shape_ranges.count(dim) != 0) return dim;
    }
  }
  return std::nullopt;
}

}  // namespace

Shape SimulatedShape(const Task& task, const Shape& from, double max_work) {
  const std::optional<std::string> dim = OutermostRangedDim(task);
  if (!dim || from.count(*dim) == 0) return from;
  const std::int64_t lowest = std::max<std::int64_t>(1, task.shape_ranges.at(*dim).first);
  const std::uint64_t floor = std::min(kSimulatedBytesFloor, BufferBytes(task, from) / 2);
  Shape shape = from;
  while (Work(task, shape) > max_work) {
    Shape halved = shape;
    halved[*dim] = shape.at(*dim) / 2;
    if (halved[*dim] < lowest || BufferBytes(task, halved) < floor) break;
    shape = std::move(halved);
  }
  return shape;
}

}  // namespace kestrel
