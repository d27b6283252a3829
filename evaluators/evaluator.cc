#include "evaluators/evaluator.h"

#include <chrono>
#include <exception>

#include "evaluators/verdict.h"

namespace kestrel {

Measurement Evaluator::Evaluate(const Candidate& candidate) {
  const BuildResult build = Build(candidate);
  return Measure(candidate, build);
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
