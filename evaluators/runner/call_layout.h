#pragma once
// Where the arguments of one call live in the memory the supervisor shares
// with a worker (runner/shared_region.h), and how the supervisor prepares
// them before each call: outputs poisoned, dims and scalars written anew
// (a kernel may have changed them), inouts restored.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "evaluators/job.h"

namespace kestrel::runner {

bool IsInputRole(ArgRole role);   // input or inout: filled before a call
bool IsResultRole(ArgRole role);  // output or inout: what a call produces

// The bytes of one argument in a call: a buffer's elements, a dim's int64,
// a scalar's value.
std::uint64_t ArgBytes(const JobArg& arg);

// Offsets (from a base) of the arguments `keep` selects, packed, each
// 64-byte aligned, never empty, and staggered so that arrays of the same
// size do not all start on the same cache sets; `bytes` is the total.
struct Placement {
  std::vector<std::uint64_t> offsets;  // per argument; unset ones are 0
  std::uint64_t bytes = 0;
};
Placement Place(const JobShape& shape, bool (*keep)(ArgRole));

// Dims and scalars of `shape` written at base + placement.
void WriteValues(const JobShape& shape, std::byte* base, const Placement& placement);
// Every output (not inout) buffer filled with the poison of `variant` (0 or
// 1: two NaN payloads for floats, two byte patterns for integers).
void PoisonOutputs(const JobShape& shape, std::byte* base, const Placement& placement, int variant);
// The name of an output that still holds the poison of `variant` where it
// was filled (for floats, whose NaN payloads an honest kernel does not
// produce, its first or last element or any of kUnwrittenProbes elements at
// places drawn from `places`, which the kernel cannot know; both edges for
// wider integers; every byte for bytes), i.e. one its call did not write;
// "" when none.
constexpr int kUnwrittenProbes = 16;
std::string UnwrittenOutput(const JobShape& shape, const std::byte* base, const Placement& placement, int variant,
                            std::uint64_t places = 0);

}  // namespace kestrel::runner
