// CpuEvaluator::CheckHiddenShapes (see cpu_evaluator.h): the shared check
// of evaluators/hidden_shape_check.h with this evaluator's jobs.

#include "evaluators/cpu_evaluator.h"
#include "evaluators/hidden_shape_check.h"

namespace kestrel {

HiddenShapeCheck CpuEvaluator::CheckHiddenShapes(const Candidate& /*candidate*/, const BuildResult& build,
                                                 std::uint64_t seed) {
  if (task_.shape_ranges.empty()) return {};
  return CheckHiddenShapesWithRunner(
      task_, MakeJob("outputs", {reference_build_.library}, false), build, seed, NewEvalDir(),
      [this](const Job& job, const std::filesystem::path& in, const std::string& phase) { return RunJob(job, in, phase); });
}

}  // namespace kestrel
