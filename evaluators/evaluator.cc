#include "evaluators/evaluator.h"

namespace kestrel {

Measurement Evaluator::Evaluate(const Candidate& candidate) {
  const BuildResult build = Build(candidate);
  return Measure(candidate, build);
}

}  // namespace kestrel
