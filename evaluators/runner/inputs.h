#pragma once
// The arguments of one kernel call (runner only): buffers allocated and
// filled deterministically, dims and scalars stored, and the pointer array
// the shim's kestrel_entry takes.
//
// Input and inout values depend only on (seed, shape index, input set, arg
// index) and the arg's init, so the reference's runner and the candidate's
// runner see bit-identical inputs without sharing memory. Output buffers
// start poisoned (NaN for floats, a byte pattern for integers).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "evaluators/job.h"

namespace kestrel::runner {

struct InputKey {
  std::uint64_t seed = 0;
  int shape_index = 0;
  int input_set = 0;
};

class ArgSet {
 public:
  ArgSet(const JobShape& shape, const InputKey& key);
  ArgSet(const ArgSet&) = delete;
  ArgSet& operator=(const ArgSet&) = delete;
  ArgSet(ArgSet&&) = default;
  ArgSet& operator=(ArgSet&&) = default;

  // args[i] for kestrel_entry.
  void* const* Pointers() const { return pointers_.data(); }
  // The bytes behind argument `index` (a buffer, a dim's int64 or a scalar).
  std::span<std::byte> Bytes(std::size_t index);
  std::span<const std::byte> Bytes(std::size_t index) const;
  std::size_t size() const { return buffers_.size(); }

  // Refills every output buffer with the poison of `variant` (0 or 1: two
  // different NaN payloads / byte patterns).
  void PoisonOutputs(int variant);

 private:
  struct FreeDeleter {
    void operator()(std::byte* p) const;
  };
  struct Buffer {
    std::unique_ptr<std::byte[], FreeDeleter> data;
    std::size_t bytes = 0;
  };
  const JobShape* shape_;
  std::vector<Buffer> buffers_;
  std::vector<void*> pointers_;
};

// Fills `out` (count elements of `type`) from the init distribution of
// `arg`, deterministically from `key` and the arg's index.
void FillInput(const JobArg& arg, const InputKey& key, int arg_index, std::byte* out);

// The seeds of one argument's draw: of its values, and of the positions a
// partial draw changes. Two seeds, so that the values a kernel sees (from
// which a seed can be recovered: secret_seeds.h) tell nothing of where
// else the draw wrote.
struct DrawSeeds {
  std::uint64_t values = 0;
  std::uint64_t positions = 0;
};

// Values afresh from the init distribution of `arg`, by a generator seeded
// with `seeds.values`: all `arg.count` elements of `out` when `elements` is
// at least that many, else `elements` of them at positions drawn at random
// by a generator seeded with `seeds.positions` (some may be drawn twice).
void DrawAfresh(const JobArg& arg, DrawSeeds seeds, std::int64_t elements, std::byte* out);

// The next value of SplitMix64 (FillInput's and DrawAfresh's generator)
// from `state`, which it advances.
std::uint64_t NextRandom(std::uint64_t& state);

// `value` converted to `type` (integers rounded and clamped) at element
// `index` of `out`.
void StoreValue(ScalarType type, double value, std::byte* out, std::int64_t index);

// A dim's value as an int64, a scalar's as its type, at `out`.
void WriteValue(const JobArg& arg, std::byte* out);

}  // namespace kestrel::runner
