#pragma once
// The knob settings of a kernel file that a person names with --knob
// NAME=VALUE flags (kestrel eval, kestrel add).

#include <string>
#include <vector>

#include "core/candidate.h"
#include "core/error.h"

namespace kestrel::cli {

// The most configurations `--sweep` evaluates (each an evaluation).
inline constexpr int kMaxSweep = 100000;

// The configurations of a knob space (the product of the value counts), as
// a double: twenty knobs of ten values overflow any integer.
double KnobSpaceOf(const std::vector<KnobSpec>& knobs);
// `configurations` for a person: digits, or 1.23e+20 past 1e15.
std::string KnobSpaceSize(double configurations);

// The knob settings to evaluate: the one the --knob flags choose (the
// declared defaults for the others), or with `sweep` every combination of the
// declared values with the --knob ones fixed, in declared order of knobs and
// values, the last knob varying fastest (as Python's itertools.product).
// A knob given twice, or a sweep of more than kMaxSweep, is InvalidArgument.
Result<std::vector<KnobValues>> ChooseKnobs(const std::string& source, const std::vector<std::string>& settings,
                                            bool sweep);

}  // namespace kestrel::cli
