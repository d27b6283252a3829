#include "evaluators/task_layout.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace kestrel {
namespace {

// A shape entry is a dim name or an integer literal.
Result<std::int64_t> DimSize(const std::string& entry, const Shape& shape) {
  if (!entry.empty() && std::all_of(entry.begin(), entry.end(), [](unsigned char c) { return std::isdigit(c); })) {
    try {
      return static_cast<std::int64_t>(std::stoll(entry));
    } catch (const std::exception&) {
      return Fail(Error::InvalidArgument("size '" + entry + "' is out of range"));
    }
  }
  const auto found = shape.find(entry);
  if (found == shape.end()) return Fail(Error::InvalidArgument("shape has no dim '" + entry + "'"));
  return found->second;
}

}  // namespace

std::string ShapeLabel(const Task& task, const Shape& shape) {
  std::string label;
  std::vector<std::string> done;
  auto add = [&](const std::string& name, std::int64_t value) {
    if (std::find(done.begin(), done.end(), name) != done.end()) return;
    done.push_back(name);
    if (!label.empty()) label += ' ';
    label += name + "=" + std::to_string(value);
  };
  for (const auto& arg : task.args) {
    if (arg.role != ArgRole::kDim) continue;
    if (const auto found = shape.find(arg.name); found != shape.end()) add(arg.name, found->second);
  }
  for (const auto& [name, value] : shape) add(name, value);
  return label;
}

Result<JobShape> LayoutShape(const Task& task, const Shape& shape) {
  JobShape layout;
  layout.label = ShapeLabel(task, shape);
  for (const auto& spec : task.args) {
    JobArg arg;
    arg.name = spec.name;
    arg.role = spec.role;
    arg.type = spec.role == ArgRole::kDim ? ScalarType::kI64 : spec.type;
    arg.init = spec.init;
    if (spec.IsBuffer()) {
      std::int64_t count = 1;
      for (const auto& entry : spec.shape) {
        auto size = DimSize(entry, shape);
        if (!size) return Fail(size.error().WithContext("arg " + spec.name));
        if (*size < 0) return Fail(Error::InvalidArgument("arg " + spec.name + ": negative size " + entry));
        if (*size > 0 && count > std::numeric_limits<std::int64_t>::max() / *size) {
          return Fail(Error::InvalidArgument("arg " + spec.name + ": size overflows at " + layout.label));
        }
        count *= *size;
      }
      arg.count = count;
    } else if (spec.role == ArgRole::kDim) {
      auto size = DimSize(spec.name, shape);
      if (!size) return Fail(size.error().WithContext("dim " + spec.name));
      arg.value = static_cast<double>(*size);
    } else {
      arg.value = spec.value;
    }
    layout.args.push_back(std::move(arg));
  }
  return layout;
}

Result<std::vector<JobShape>> LayoutShapes(const Task& task, bool timed_only) {
  std::vector<JobShape> layouts;
  std::vector<const Shape*> shapes;
  for (const auto& shape : task.shapes) shapes.push_back(&shape);
  if (!timed_only) {
    for (const auto& shape : task.check_shapes) shapes.push_back(&shape);
  }
  for (const Shape* shape : shapes) {
    auto layout = LayoutShape(task, *shape);
    if (!layout) return Fail(layout.error().WithContext("task " + task.name));
    layouts.push_back(std::move(*layout));
  }
  return layouts;
}

double OutputElements(const Task& task, const Shape& shape) {
  std::int64_t elements = 0;
  for (const ArgSpec& arg : task.args) {
    if (arg.role == ArgRole::kOutput || arg.role == ArgRole::kInOut) {
      elements = std::max(elements, task.ElementCount(arg, shape));
    }
  }
  return static_cast<double>(elements);
}

std::vector<ShapeScalingPoint> TimePerElement(const Task& task, const Measurement& measurement) {
  std::vector<ShapeScalingPoint> scaling;
  for (const ShapeTiming& timing : measurement.shapes) {
    const double elements = OutputElements(task, timing.shape);
    if (elements > 0 && timing.candidate.median > 0) {
      scaling.push_back({ShapeLabel(task, timing.shape), elements, timing.candidate.median * 1e9 / elements});
    }
  }
  std::sort(scaling.begin(), scaling.end(),
            [](const ShapeScalingPoint& a, const ShapeScalingPoint& b) { return a.elements < b.elements; });
  return scaling;
}

}  // namespace kestrel
