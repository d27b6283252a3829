#pragma once
// From a Task to the runner's job layout: every argument of every shape with
// its type, element count, value and init (see evaluators/job.h).

#include <string>
#include <vector>

#include "core/error.h"
#include "core/measurement.h"
#include "core/profile.h"
#include "core/task.h"
#include "evaluators/job.h"

namespace kestrel {

// "rows=7 cols=33": the task's dims in argument order, then any other key.
std::string ShapeLabel(const Task& task, const Shape& shape);

// Elements of the task's largest output (or inout) buffer at `shape`: what
// "per element" means in a profile (core/profile.h).
double OutputElements(const Task& task, const Shape& shape);

// The time per element (OutputElements) of each timed shape of a measured
// result, smallest first: the profile's shape scaling.
std::vector<ShapeScalingPoint> TimePerElement(const Task& task, const Measurement& measurement);

// The layout of one shape. InvalidArgument when a dim the task names is
// missing from the shape, or a size is negative or overflows.
Result<JobShape> LayoutShape(const Task& task, const Shape& shape);

// task.shapes, followed by task.check_shapes unless `timed_only`.
Result<std::vector<JobShape>> LayoutShapes(const Task& task, bool timed_only);

}  // namespace kestrel
