#pragma once
// The knob settings of a kernel file that a person names with --knob
// NAME=VALUE flags (kestrel eval, kestrel add).

#include <string>
#include <vector>

#include "core/candidate.h"
#include "core/error.h"

namespace kestrel::cli {

// The knob settings to evaluate: the one the --knob flags choose (the
// declared defaults for the others), or with `sweep` every combination of the
// declared values with the --knob ones fixed, in declared order of knobs and
// values, the last knob varying fastest (as Python's itertools.product).
Result<std::vector<KnobValues>> ChooseKnobs(const std::string& source, const std::vector<std::string>& settings,
                                            bool sweep);

}  // namespace kestrel::cli
