#pragma once
// The element test of EVALUATION.md, "Correctness", as the supervisor
// applies it to memory it shares with its workers: c passes when
// |c - r| <= atol + rtol * |r|, and where r is not finite c must be the same
// value. (The engine's full comparison, with its L2 bound, is compare.h.)

#include <cstddef>
#include <cstdint>

#include "core/scalar_type.h"

namespace kestrel::runner {

// The first of `count` elements of `type` where `candidate` fails against
// `reference`, or -1 when none does.
std::int64_t FirstMismatch(ScalarType type, const std::byte* candidate, const std::byte* reference, std::int64_t count,
                           double rtol, double atol);

}  // namespace kestrel::runner
