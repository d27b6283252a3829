#pragma once
// CodeFeatures: what a cost model can read from a kernel's source text before
// it is built (issue 17: features for sources without knobs). A fixed-length
// vector of counts, each a property a rewrite changes on purpose: loops and
// their nesting, unrolling and OpenMP pragmas, vector intrinsics by width,
// fused multiply-adds, restrict and alignment hints, the sizes its literals
// name (tiles, unroll factors: log2 buckets), and CUDA's shared memory,
// barriers, shuffles, vector loads and tensor-core calls. Comments and string
// literals are skipped; a knob's value counts as the literal it becomes
// (SubstituteKnobs).
//
// Pure functions; thread-safe.

#include <array>
#include <cstddef>
#include <string_view>

namespace kestrel {

inline constexpr std::size_t kCodeFeatureCount = 33;
using CodeFeatureVector = std::array<float, kCodeFeatureCount>;

// The features of `source` (counts as floats; log2(1 + n) for sizes that grow
// with the file).
CodeFeatureVector CodeFeatures(std::string_view source);

// The name of feature `index` ("for_loops", "literal_64_127", ...), for
// docs, tests and a model's explanation.
std::string_view CodeFeatureName(std::size_t index);

}  // namespace kestrel
