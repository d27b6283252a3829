// DrawAfresh and FreshInputs (evaluators/runner/fresh_inputs.h): how many of
// a call slot's input elements are drawn afresh before each round, within
// the reference's budget, that the draws are new values from the
// argument's distribution, and that their seeds (SecretSeeds) cannot be
// predicted from earlier ones.

#include "evaluators/runner/fresh_inputs.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iterator>
#include <random>
#include <vector>

#include <doctest.h>

#include "core/half_float.h"
#include "core/scalar_type.h"
#include "evaluators/runner/inputs.h"
#include "evaluators/runner/secret_seeds.h"

namespace kestrel::runner {
namespace {

JobArg Arg(ArgRole role, ScalarType type, std::int64_t count, InitSpec init = {}) {
  JobArg arg;
  arg.name = "x";
  arg.role = role;
  arg.type = type;
  arg.count = count;
  arg.init = init;
  return arg;
}

InitSpec Uniform(double lo, double hi) {
  InitSpec init;
  init.dist = InitSpec::Dist::kUniform;
  init.lo = lo;
  init.hi = hi;
  return init;
}

std::vector<float> Floats(std::size_t n, float value) { return std::vector<float>(n, value); }

int Changed(const std::vector<float>& values, float was) {
  int changed = 0;
  for (float v : values) changed += v != was;
  return changed;
}

TEST_SUITE("fresh_inputs") {
  TEST_CASE("all elements drawn: every one is new and from the distribution; other seeds give other values") {
    const JobArg arg = Arg(ArgRole::kInput, ScalarType::kF32, 10000, Uniform(2.0, 3.0));
    std::vector<float> first = Floats(10000, -7.0f);
    DrawAfresh(arg, {11, 1}, arg.count, reinterpret_cast<std::byte*>(first.data()));
    for (float v : first) {
      REQUIRE(v >= 2.0f);
      REQUIRE(v <= 3.0f);
    }
    std::vector<float> second = first;
    DrawAfresh(arg, {12, 1}, arg.count, reinterpret_cast<std::byte*>(second.data()));
    int same = 0;
    for (std::size_t i = 0; i < first.size(); ++i) same += first[i] == second[i];
    CHECK(same < 10);
    std::vector<float> again = Floats(10000, -7.0f);
    DrawAfresh(arg, {11, 1}, arg.count, reinterpret_cast<std::byte*>(again.data()));
    CHECK(std::memcmp(again.data(), first.data(), first.size() * sizeof(float)) == 0);
  }

  TEST_CASE("some elements drawn: at most that many change, at positions spread over the buffer") {
    const JobArg arg = Arg(ArgRole::kInput, ScalarType::kF32, 100000, Uniform(1.0, 2.0));
    std::vector<float> values = Floats(100000, -1.0f);
    DrawAfresh(arg, {5, 1}, 1000, reinterpret_cast<std::byte*>(values.data()));
    const int changed = Changed(values, -1.0f);
    CHECK(changed <= 1000);
    CHECK(changed > 950);  // a few positions drawn twice
    int first_half = 0;
    for (std::size_t i = 0; i < values.size() / 2; ++i) first_half += values[i] != -1.0f;
    CHECK(first_half > changed / 3);
    CHECK(first_half < 2 * changed / 3);
  }

  TEST_CASE("a partial draw's positions have a seed of their own: the values' seed does not tell where they went") {
    const JobArg arg = Arg(ArgRole::kInput, ScalarType::kF32, 100000, Uniform(1.0, 2.0));
    std::vector<float> a = Floats(100000, -1.0f);
    std::vector<float> b = a;
    DrawAfresh(arg, {5, 1}, 1000, reinterpret_cast<std::byte*>(a.data()));
    DrawAfresh(arg, {5, 2}, 1000, reinterpret_cast<std::byte*>(b.data()));
    int both = 0, either = 0;
    std::vector<float> values_a, values_b;
    for (std::size_t i = 0; i < a.size(); ++i) {
      both += a[i] != -1.0f && b[i] != -1.0f;
      either += a[i] != -1.0f || b[i] != -1.0f;
      if (a[i] != -1.0f) values_a.push_back(a[i]);
      if (b[i] != -1.0f) values_b.push_back(b[i]);
    }
    CHECK(either > 1900);
    CHECK(both < 50);  // 10 expected by chance
    // The same values, elsewhere (but for the few positions drawn twice).
    std::sort(values_a.begin(), values_a.end());
    std::sort(values_b.begin(), values_b.end());
    std::vector<float> common;
    std::set_intersection(values_a.begin(), values_a.end(), values_b.begin(), values_b.end(),
                          std::back_inserter(common));
    CHECK(common.size() > 950);
  }

  TEST_CASE("the seeds: 312 of them recovered by a kernel do not predict the next, as a std::mt19937_64's would") {
    // What a kernel that recovers each draw's seed from the values it sees
    // (secret_seeds.h) would do with a Mersenne twister's outputs: undo the
    // tempering of 312 consecutive ones, which gives the generator's state,
    // and run its recurrence to predict the next outputs.
    const auto untemper = [](std::uint64_t y) {
      y ^= y >> 43;
      y ^= (y << 37) & 0xFFF7EEE000000000ULL;
      std::uint64_t x = y;
      for (int i = 0; i < 4; ++i) x = y ^ ((x << 17) & 0x71D67FFFEDA60000ULL);
      y = x;
      for (int i = 0; i < 3; ++i) x = y ^ ((x >> 29) & 0x5555555555555555ULL);
      return x;
    };
    const auto temper = [](std::uint64_t y) {
      y ^= (y >> 29) & 0x5555555555555555ULL;
      y ^= (y << 17) & 0x71D67FFFEDA60000ULL;
      y ^= (y << 37) & 0xFFF7EEE000000000ULL;
      return y ^ (y >> 43);
    };
    const auto predicted_right = [&](auto& generator) {
      std::vector<std::uint64_t> state;
      for (int i = 0; i < 312; ++i) state.push_back(untemper(generator()));
      int right = 0;
      for (int i = 0; i < 16; ++i) {
        const std::size_t n = state.size();
        const std::uint64_t y = (state[n - 312] & 0xFFFFFFFF80000000ULL) | (state[n - 311] & 0x7FFFFFFFULL);
        state.push_back(state[n - 156] ^ (y >> 1) ^ ((y & 1) != 0 ? 0xB5026F5AA96619E9ULL : 0));
        right += temper(state.back()) == generator();
      }
      return right;
    };
    std::mt19937_64 twister(std::random_device{}());
    CHECK(predicted_right(twister) == 16);  // the attack is sound
    SecretSeeds seeds;
    CHECK(predicted_right(seeds) == 0);
    // Nor are they the same from one evaluation to the next.
    SecretSeeds other;
    int same = 0;
    for (int i = 0; i < 1000; ++i) same += seeds() == other();
    CHECK(same == 0);
  }

  TEST_CASE("integers and normals: in range, and whole") {
    InitSpec ints;
    ints.dist = InitSpec::Dist::kInt;
    ints.lo = -3;
    ints.hi = 4;
    const JobArg arg = Arg(ArgRole::kInOut, ScalarType::kI32, 5000, ints);
    std::vector<std::int32_t> values(5000, 99);
    DrawAfresh(arg, {3, 1}, arg.count, reinterpret_cast<std::byte*>(values.data()));
    bool low = false, high = false;
    for (std::int32_t v : values) {
      REQUIRE(v >= -3);
      REQUIRE(v <= 4);
      low = low || v == -3;
      high = high || v == 4;
    }
    CHECK(low);
    CHECK(high);
    InitSpec normal;
    normal.mean = 10;
    normal.std = 2;
    const JobArg gauss = Arg(ArgRole::kInput, ScalarType::kF64, 20001, normal);
    std::vector<double> g(20001, 0.0);
    DrawAfresh(gauss, {4, 1}, gauss.count, reinterpret_cast<std::byte*>(g.data()));
    double sum = 0, squares = 0;
    for (double v : g) sum += v;
    const double mean = sum / g.size();
    for (double v : g) squares += (v - mean) * (v - mean);
    CHECK(mean == doctest::Approx(10).epsilon(0.01));
    CHECK(std::sqrt(squares / g.size()) == doctest::Approx(2).epsilon(0.05));
    CHECK(g.back() != 0.0);  // the odd element out of the last pair
  }

  TEST_CASE("normals follow the normal distribution: its CDF, its tails beyond the ziggurat's base, f32 and bf16") {
    InitSpec normal;  // standard
    constexpr std::int64_t kCount = 1 << 20;
    const JobArg arg = Arg(ArgRole::kInput, ScalarType::kF64, kCount, normal);
    std::vector<double> values(kCount);
    DrawAfresh(arg, {21, 1}, kCount, reinterpret_cast<std::byte*>(values.data()));
    std::sort(values.begin(), values.end());
    // Kolmogorov-Smirnov: the largest gap between the sample's CDF and the
    // normal's; at 1M draws a gap over 1.63 / sqrt(n) has probability 1%.
    double gap = 0;
    for (std::int64_t i = 0; i < kCount; i += 97) {
      const double cdf = 0.5 * std::erfc(-values[i] / std::sqrt(2.0));
      gap = std::max(gap, std::fabs(cdf - static_cast<double>(i) / kCount));
    }
    CHECK(gap < 1.63 / std::sqrt(static_cast<double>(kCount)));
    // Beyond 3.4426 (the ziggurat's base, drawn by the tail method) lies
    // 5.76e-4 of the mass, both sides: about 604 of 1M draws, sd 25.
    const auto beyond = [&](double x) {
      return std::count_if(values.begin(), values.end(), [x](double v) { return std::fabs(v) > x; });
    };
    CHECK(beyond(3.4426) > 500);
    CHECK(beyond(3.4426) < 710);
    CHECK(beyond(4.5) > 0);     // 7 expected
    CHECK(beyond(4.5) < 20);
    CHECK(values.front() < -3.4426);
    CHECK(values.back() > 3.4426);
    // Each half as likely: the tail's sign and the layers' too.
    const auto negative = std::count_if(values.begin(), values.end(), [](double v) { return v < 0; });
    CHECK(std::abs(static_cast<double>(negative) - kCount / 2) < 4 * 512);
    // Stored as f32 and as bf16: the same distribution, rounded.
    InitSpec shifted;
    shifted.mean = 3;
    shifted.std = 0.5;
    for (ScalarType type : {ScalarType::kF32, ScalarType::kBF16}) {
      const JobArg typed = Arg(ArgRole::kInput, type, 100000, shifted);
      std::vector<std::byte> bytes(100000 * SizeOf(type));
      DrawAfresh(typed, {5, 1}, typed.count, bytes.data());
      double sum = 0, squares = 0;
      for (std::int64_t i = 0; i < typed.count; ++i) {
        double v = 0;
        if (type == ScalarType::kF32) {
          float f = 0;
          std::memcpy(&f, bytes.data() + 4 * i, 4);
          v = f;
        } else {
          std::uint16_t bits = 0;
          std::memcpy(&bits, bytes.data() + 2 * i, 2);
          v = FromBf16Bits(bits);
        }
        sum += v;
        squares += (v - 3) * (v - 3);
      }
      CHECK(sum / typed.count == doctest::Approx(3).epsilon(0.002));
      CHECK(std::sqrt(squares / typed.count) == doctest::Approx(0.5).epsilon(0.01));
    }
  }

  TEST_CASE("the plan: all elements within the budget, the same share of each argument beyond it, never fewer than 8") {
    JobShape shape;
    shape.args = {Arg(ArgRole::kInput, ScalarType::kF32, 1 << 16, Uniform(-1, 1)),
                  Arg(ArgRole::kInput, ScalarType::kF32, 1 << 12, Uniform(-1, 1)),
                  Arg(ArgRole::kOutput, ScalarType::kF32, 1 << 16),
                  Arg(ArgRole::kInOut, ScalarType::kF32, 3, Uniform(-1, 1)),
                  Arg(ArgRole::kDim, ScalarType::kI64, 0)};
    FreshInputs fresh(shape);
    // Before a plan: the least, as before any budget is known.
    CHECK(fresh.elements(0) == 8);
    CHECK(fresh.elements(2) == 0);
    CHECK(fresh.elements(3) == 3);
    fresh.Plan(10.0);  // seconds: far more than any draw of 70 thousand elements
    CHECK(fresh.elements(0) == 1 << 16);
    CHECK(fresh.elements(1) == 1 << 12);
    CHECK(fresh.elements(2) == 0);
    CHECK(fresh.elements(3) == 3);
    CHECK(fresh.elements(4) == 0);
    CHECK(fresh.share() == 1.0);
    fresh.Plan(0.0);
    CHECK(fresh.elements(0) == 8);
    CHECK(fresh.elements(1) == 8);
    CHECK(fresh.elements(3) == 3);
    CHECK(fresh.share() < 0.001);
    // A budget of a draw of about a tenth of the elements: a tenth of each.
    FreshInputs timed(shape);
    timed.Plan(10.0);
    const std::int64_t all = (1 << 16) + (1 << 12) + 3;
    std::vector<float> scratch(1 << 16);
    double full = 1e9;
    for (int i = 0; i < 5; ++i) {  // the fastest of a few draws, as the plan's own timing is
      const auto start = std::chrono::steady_clock::now();
      DrawAfresh(shape.args[0], {9 + static_cast<std::uint64_t>(i), 1}, shape.args[0].count, reinterpret_cast<std::byte*>(scratch.data()));
      full = std::min(full, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    timed.Plan(full * all / (1 << 16) / 10);
    const double share0 = static_cast<double>(timed.elements(0)) / (1 << 16);
    const double share1 = static_cast<double>(timed.elements(1)) / (1 << 12);
    CHECK(share0 == doctest::Approx(share1).epsilon(0.05));
    CHECK(share0 > 0.01);
    CHECK(share0 < 0.9);

    // Timed at random positions in the slot's own buffers (here 4 MiB, past
    // L2): a share is planned at that cost, never less than in order and at
    // most 8 times it; every element still goes at the cost in order.
    JobShape large;
    large.args = {Arg(ArgRole::kInput, ScalarType::kF32, 1 << 20, Uniform(-1, 1)),
                  Arg(ArgRole::kOutput, ScalarType::kF32, 1 << 20)};
    std::vector<float> buffer(1 << 20, 0.0f);
    FreshInputs scattered(large);
    scattered.Plan(10.0);
    CHECK(scattered.elements(0) == 1 << 20);
    const double budget = full * 16 / 10;  // about a tenth of a draw in order of all 1M elements
    scattered.Plan(budget);
    const std::int64_t before = scattered.elements(0);
    CHECK(before < (1 << 20));
    scattered.TimeScattered({reinterpret_cast<std::byte*>(buffer.data()), nullptr}, 77);
    CHECK(std::count(buffer.begin(), buffer.end(), 0.0f) < (1 << 20));  // it drew into the buffer
    scattered.Plan(budget);
    CHECK(scattered.elements(0) <= before);
    CHECK(8 * scattered.elements(0) >= before - 8);
    CHECK(scattered.elements(1) == 0);
    scattered.Plan(10.0);
    CHECK(scattered.elements(0) == 1 << 20);
  }
}

}  // namespace
}  // namespace kestrel::runner
