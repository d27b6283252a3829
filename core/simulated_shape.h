#pragma once
// The shape a cache simulation runs (docs/PROFILES.md, "Simulated counts"):
// cachegrind runs a kernel some 50 times slower than the hardware, so the
// profile simulates one call of a shape cut down from the smallest timed
// one, chosen from the task alone, so that every candidate of a task is
// simulated on the same shape and its counts stay deterministic.

#include <cstdint>

#include "core/task.h"

namespace kestrel {

// The work a simulation may take: flops (the task's formula) or buffer
// elements, whichever is more, at most this (about 0.1-0.3 s of cachegrind).
constexpr double kSimulatedWork = 2.0 * 1024 * 1024;

// A working set the cut never goes below: far beyond any L1 data cache,
// the one level whose capacity a one-call, cold-cache simulation shows.
constexpr std::uint64_t kSimulatedBytesFloor = 1024 * 1024;

// `from` (a timed shape), with its outermost ranged dim (the first dim of
// the first buffer argument that has a shape_range) halved while the work
// exceeds `max_work`, the dim stays within its range, and the buffers keep
// at least kSimulatedBytesFloor bytes or half of `from`'s, whichever is
// less (a small working set with much reuse, like a 256^3 matmul's, is cut
// once at most). Other dims keep their sizes, so a row keeps its length and
// a reused operand its size. `from` itself when the task has no ranges.
Shape SimulatedShape(const Task& task, const Shape& from, double max_work = kSimulatedWork);

}  // namespace kestrel
