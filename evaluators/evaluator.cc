#include "evaluators/evaluator.h"

#include <chrono>
#include <exception>

#include "core/hidden_shapes.h"
#include "evaluators/verdict.h"

namespace kestrel {

Measurement Evaluator::Evaluate(const Candidate& candidate) {
  const BuildResult build = Build(candidate);
  Measurement measured = Measure(candidate, build);
  if (measured.outcome != Outcome::kMeasured) return measured;
  const std::string identity = candidate.Identity();
  const std::uint64_t salt = std::stoull(identity.substr(0, 16), nullptr, 16);
  return WithHiddenShapeVerdict(std::move(measured),
                                CheckHiddenShapes(candidate, build, HiddenShapeSeed(measured.seed, salt)));
}

Measurement WithHiddenShapeVerdict(Measurement measured, const HiddenShapeCheck& check) {
  if (!check.failure) return measured;
  Measurement verdict = std::move(measured);
  verdict.outcome = check.failure->outcome;
  verdict.reason = check.failure->reason;
  std::string log = check.failure->log;
  if (!log.empty() && log.back() != '\n') log += '\n';
  verdict.log = log + "measured on the task's own shapes before the check, at " + Number(verdict.speedup) + "x:\n" +
                verdict.log;
  return verdict;
}

Measurement MeasureGuarded(const BuildResult& build, const MeasureOptions& options,
                           const std::function<Measurement()>& measure) {
  const auto start = std::chrono::steady_clock::now();
  Measurement measurement;
  try {
    measurement = measure();
  } catch (const std::exception& e) {
    measurement = Verdict(Outcome::kRejected, std::string("evaluator error: ") + e.what(), "");
  } catch (...) {
    measurement = Verdict(Outcome::kRejected, "evaluator error: unknown exception", "");
  }
  measurement.build_seconds = build.seconds;
  measurement.eval_seconds = Since(start);
  measurement.input_sets = options.input_sets;
  measurement.seed = options.seed;
  return measurement;
}

}  // namespace kestrel
