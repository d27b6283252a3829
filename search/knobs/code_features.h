#pragma once
// CodeFeatures: what a cost model can read from a kernel's source text before
// it is built (issue 17: features for sources without knobs). A fixed-length
// vector of counts, each a property a rewrite changes on purpose: loops and
// their nesting, unrolling and OpenMP pragmas, vector intrinsics by width,
// fused multiply-adds, restrict and alignment hints, the sizes its literals
// name (tiles, unroll factors: log2 buckets), CUDA's shared memory,
// barriers, shuffles, vector loads and tensor-core calls, and the values of
// its named integer constants (`#define NAME 64`, `constexpr int NAME = 64;`:
// log2(2 + value) in one of 16 slots chosen by a hash of the name, so the
// versions of one rewrite that keep a constant's name line up; the first
// definition of a name counts). Comments and string literals are skipped; a
// knob's value counts as the constant it becomes (SubstituteKnobs).
//
// Pure functions; thread-safe.

#include <array>
#include <cstddef>
#include <string_view>

namespace kestrel {

inline constexpr std::size_t kCodeFeatureCount = 49;
using CodeFeatureVector = std::array<float, kCodeFeatureCount>;

// The features of `source` (counts as floats; log2(1 + n) for sizes that grow
// with the file).
CodeFeatureVector CodeFeatures(std::string_view source);

// The name of feature `index` ("for_loops", "literal_64_127", "constant_3",
// ...), for
// docs, tests and a model's explanation.
std::string_view CodeFeatureName(std::size_t index);

}  // namespace kestrel
