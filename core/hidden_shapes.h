#pragma once
// Hidden shapes (EVALUATION.md, "Correctness"): a kernel that is right on
// the task's timed and checked shapes may special-case them (agents in
// public suites hard-coded shapes; a kernel at 2.95x on its test sizes fell
// to 0.23x on a held-out one). A task that declares `shape_ranges` has every
// result that would count as confirmed checked on shapes drawn here, with a
// fresh input seed, never shown in a prompt.

#include <cstdint>
#include <vector>

#include "core/task.h"

namespace kestrel {

// How many hidden shapes each check draws.
constexpr int kHiddenShapeCount = 2;

// `count` shapes drawn from the task's shape_ranges by `seed`: each ranged
// dim log-uniformly within its range (small and large sizes alike), every
// other dim at its first timed size. A draw equal to a timed or checked
// shape, or whose buffers would take more bytes than the largest timed
// shape's, is drawn again (a few times; then the smallest draw is kept), so
// that a check costs no more than a timed call. Empty when the task has no
// ranges. Deterministic in (task, seed).
std::vector<Shape> DrawHiddenShapes(const Task& task, std::uint64_t seed, int count = kHiddenShapeCount);

// Bytes of every buffer argument at `shape`.
std::uint64_t BufferBytes(const Task& task, const Shape& shape);

// The seed of one check: the run's measurement seed mixed with what the
// check is about (a node and a run), so that every node gets shapes of its
// own and a result's shapes are unknown before it is measured.
std::uint64_t HiddenShapeSeed(std::uint64_t measure_seed, std::uint64_t salt);

}  // namespace kestrel
