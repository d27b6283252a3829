#pragma once
// Seeds a kernel cannot predict, for the inputs drawn afresh before each
// round of timed samples (TimeShapes).
//
// A kernel sees every value drawn, and a seed is easy to recover from them:
// SplitMix64's output function is a bijection, so two f64 uniform values at
// known positions (a whole argument drawn afresh) give its seed with at most
// 2^11 guesses. Seeds taken from a std::mt19937_64 would then give away that
// generator's state after 312 of them (its tempering is invertible too), and
// with it every later round's inputs: a kernel allowed threads could compute
// the next round's answers between calls and return them at once. So the
// seeds come from the operating system's cryptographic generator
// (getrandom(2)), read in blocks: one system call per 512 seeds (4 KiB), 18 ns
// a seed against a twister's 6.6 (bench/inputs_bench, BM_Seeds).

#include <array>
#include <cstddef>
#include <cstdint>

namespace kestrel::runner {

class SecretSeeds {
 public:
  using result_type = std::uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }

  // The next seed. Throws std::system_error when getrandom(2) fails (it
  // does not, on a kernel of 3.17 or later, once its pool is initialized).
  result_type operator()();

 private:
  std::array<std::uint64_t, 512> block_{};
  std::size_t next_ = block_.size();
};

}  // namespace kestrel::runner
