#include "evaluators/hidden_shape_check.h"

#include <regex>

#include "core/hidden_shapes.h"
#include "evaluators/removed_at_end.h"
#include "evaluators/task_layout.h"
#include "evaluators/verdict.h"

namespace kestrel {

HiddenShapeCheck CheckHiddenShapesWithRunner(const Task& task, Job reference, const BuildResult& build,
                                             std::uint64_t seed, const std::filesystem::path& dir,
                                             const RunJobFunction& run_job) {
  HiddenShapeCheck check;
  if (task.shape_ranges.empty()) return check;
  if (!build.ok) {
    check.note = "not built";
    return check;
  }
  Task hidden = task;
  hidden.shapes = DrawHiddenShapes(task, seed);
  hidden.check_shapes.clear();
  if (hidden.shapes.empty()) {
    check.note = "every shape drawn from the ranges is a timed or checked one";
    return check;
  }
  auto layout = LayoutShapes(hidden, true);
  if (!layout) {
    check.note = layout.error().message();
    return check;
  }
  // The messages may reach a fix prompt: they name no size.
  for (std::size_t i = 0; i < layout->size(); ++i) (*layout)[i].label = "hidden shape " + std::to_string(i + 1);

  const RemovedAtEnd remove{dir};
  std::filesystem::create_directories(dir / "reference");
  std::filesystem::create_directories(dir / "candidate");
  reference.shapes = *layout;
  reference.inputs_file.clear();  // drawn in memory from the check's own seed
  reference.input_sets = 1;
  reference.seed = seed;
  // Each output in its own job's folder: a runner that shares the kernel's process
  // (the CUDA runner) sees only that folder, never the reference's outputs.
  reference.output_file = dir / "reference" / "outputs.bin";
  const JobRun reference_run = run_job(reference, dir / "reference", "running the reference on hidden shapes");
  if (reference_run.failure) {
    // The task's ranges allow a shape its own reference cannot take: the
    // task's mistake, never the candidate's.
    check.note = "the reference " + std::string(ToString(reference_run.failure->outcome)) + " on a hidden shape (" +
                 ToString(hidden.shapes.front()) + ", ...): " + reference_run.failure->reason +
                 "; narrow the task's shape_ranges";
    return check;
  }
  const JudgeContext context{&task, &*layout, &*layout, 1};
  Job outputs = reference;
  outputs.libraries = {build.library};
  outputs.output_file = dir / "candidate" / "outputs.bin";
  const JobRun run = run_job(outputs, dir / "candidate", "checking hidden shapes");
  std::optional<Measurement> verdict =
      run.failure ? run.failure : JudgeOutputs(context, outputs, run.result, reference.output_file, run.log);
  check.shapes = std::move(hidden.shapes);
  if (!verdict) return check;
  // A kernel that fails a size it was never shown is wrong, whatever way it
  // fails; a sandbox violation stays what it is.
  Measurement failure = std::move(*verdict);
  const Outcome outcome = failure.outcome;
  if (outcome != Outcome::kRejected) failure.outcome = Outcome::kWrong;
  // Element counts and indices would tell the sizes: the reason loses its
  // " at y[123]" and the log its per-element details.
  const std::string reason = std::regex_replace(failure.reason, std::regex(R"( at [A-Za-z_][A-Za-z0-9_]*\[[0-9]+\])"), "");
  failure.reason = "hidden shape: " + (outcome == Outcome::kWrong ? "" : std::string(ToString(outcome)) + ": ") + reason;
  failure.log = "checked on " + std::to_string(check.shapes.size()) +
                " shapes drawn from the task's shape_ranges, with a fresh input seed; their sizes, element counts "
                "and positions are not shown\n" +
                (outcome == Outcome::kWrong ? std::string() : failure.log);
  check.failure = std::move(failure);
  return check;
}

}  // namespace kestrel
