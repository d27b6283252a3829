#pragma once
// The small task the evaluator tests use: y[i] = a * x[i] + 1 over n, fast
// enough that an evaluation takes a fraction of a second.

#include <string>

#include "core/candidate.h"
#include "core/task.h"
#include "evaluators/evaluator.h"
#include "testing.h"

namespace kestrel::testing {

inline std::string KernelSource(const std::string& name) {
  return ReadFile(SourceDir() / "tests" / "evaluators" / "kernels" / (name + ".cpp"));
}

inline Task MakeScaleTask() {
  Task task;
  task.name = "scale_add";
  task.description = "y = a * x + 1";
  task.language = "cpp";
  task.entry = "scale_add";
  ArgSpec x{"x", ArgRole::kInput, ScalarType::kF32, {"n"}, {}, 0.0};
  ArgSpec y{"y", ArgRole::kOutput, ScalarType::kF32, {"n"}, {}, 0.0};
  ArgSpec n{"n", ArgRole::kDim, ScalarType::kI64, {}, {}, 0.0};
  ArgSpec a{"a", ArgRole::kScalar, ScalarType::kF32, {}, {}, 2.0};
  task.args = {x, y, n, a};
  task.shapes = {{{"n", 100000}}};
  task.check_shapes = {{{"n", 7}}};
  task.tolerance = {1e-5, 1e-6};
  task.reference = {"scale_ref.cpp", KernelSource("scale_ref")};
  return task;
}

inline CpuEvaluatorOptions FastOptions() {
  CpuEvaluatorOptions options;
  options.flags = {"-O2"};
  options.measure.min_time_s = 0.02;
  options.measure.min_samples = 5;
  options.measure.run_timeout_s = 3;
  options.build_timeout_s = 60;
  options.runner_path = RunnerPath();
  options.worker_path = WorkerPath();
  return options;
}

inline Candidate MakeCandidate(const Evaluator& evaluator, const std::string& kernel, KnobValues knobs = {}) {
  return Candidate{KernelSource(kernel), std::move(knobs), evaluator.Toolchain(), evaluator.Flags()};
}

}  // namespace kestrel::testing
