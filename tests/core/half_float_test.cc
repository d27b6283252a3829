// f16 and bf16 conversions (core/half_float.h) against known encodings:
// rounding to nearest even, subnormals, overflow to infinity, NaN.

#include <doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "core/half_float.h"
#include "core/scalar_type.h"

using namespace kestrel;

namespace {

// The encoding `bits` rounds `value` to nearest, ties to even: no encoding
// of the same sign one step either side is nearer, and a tie keeps the even
// one. Finite neighbours only (the largest finite's next is infinity).
void CheckNearest(double value, std::uint16_t bits, double (*decode)(std::uint16_t)) {
  const double chosen = decode(bits);
  REQUIRE(std::isfinite(chosen));
  const double error = std::fabs(value - chosen);
  for (int step : {-1, 1}) {
    const int magnitude = (bits & 0x7FFF) + step;
    if (magnitude < 0) continue;
    const double other = decode(static_cast<std::uint16_t>((bits & 0x8000) | magnitude));
    if (!std::isfinite(other)) continue;
    const double other_error = std::fabs(value - other);
    CHECK(error <= other_error);
    if (error == other_error) CHECK((bits & 1) == 0);
  }
}

}  // namespace

TEST_SUITE("half_float") {
  TEST_CASE("f16: exact values, the largest finite, rounding ties to even, overflow") {
    CHECK(ToF16Bits(1.0) == 0x3C00);
    CHECK(ToF16Bits(-2.0) == 0xC000);
    CHECK(ToF16Bits(0.5) == 0x3800);
    CHECK(ToF16Bits(0.0) == 0x0000);
    CHECK(ToF16Bits(-0.0) == 0x8000);
    CHECK(ToF16Bits(65504.0) == 0x7BFF);     // the largest finite
    CHECK(ToF16Bits(65519.99) == 0x7BFF);    // below the midpoint to 65536
    CHECK(ToF16Bits(65520.0) == 0x7C00);     // the midpoint rounds to even: infinity
    CHECK(ToF16Bits(1e6) == 0x7C00);
    CHECK(ToF16Bits(-INFINITY) == 0xFC00);
    // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: to even (1); 1 + 3*2^-11 to 1 + 2^-9.
    CHECK(ToF16Bits(1.0 + std::ldexp(1.0, -11)) == 0x3C00);
    CHECK(ToF16Bits(1.0 + 3 * std::ldexp(1.0, -11)) == 0x3C02);
    CHECK(ToF16Bits(1.0 + std::ldexp(1.0, -11) + 1e-12) == 0x3C01);  // just past the tie
    // 0.1 is 0x2E66 (0.0999755859375).
    CHECK(ToF16Bits(0.1) == 0x2E66);
    CHECK(FromF16Bits(0x2E66) == 0.0999755859375);
  }

  TEST_CASE("f16: subnormals and the smallest normal") {
    CHECK(ToF16Bits(std::ldexp(1.0, -24)) == 0x0001);      // the smallest subnormal
    CHECK(ToF16Bits(std::ldexp(1.0, -25)) == 0x0000);      // half of it: a tie, to even (0)
    CHECK(ToF16Bits(std::ldexp(3.0, -26)) == 0x0001);      // 0.75 of it: up
    CHECK(ToF16Bits(std::ldexp(1023.0, -24)) == 0x03FF);   // the largest subnormal
    CHECK(ToF16Bits(std::ldexp(1023.5, -24)) == 0x0400);   // rounds up into the smallest normal
    CHECK(ToF16Bits(std::ldexp(1.0, -14)) == 0x0400);
    CHECK(FromF16Bits(0x0001) == std::ldexp(1.0, -24));
    CHECK(FromF16Bits(0x03FF) == std::ldexp(1023.0, -24));
    CHECK(FromF16Bits(0x8001) == -std::ldexp(1.0, -24));
  }

  TEST_CASE("f16 and bf16: NaN stays NaN, infinity stays infinity, every finite encoding round-trips") {
    CHECK(std::isnan(FromF16Bits(ToF16Bits(NAN))));
    CHECK(std::isnan(FromBf16Bits(ToBf16Bits(NAN))));
    CHECK(std::isnan(FromF16Bits(0x7E12)));  // the harness's poison
    CHECK(std::isnan(FromBf16Bits(0x7FC1)));
    CHECK(FromF16Bits(0x7C00) == INFINITY);
    CHECK(FromBf16Bits(0xFF80) == -INFINITY);
    for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
      const auto b = static_cast<std::uint16_t>(bits);
      const double f16 = FromF16Bits(b);
      if (std::isfinite(f16)) {
        CAPTURE(bits);
        REQUIRE(ToF16Bits(f16) == b);
      }
      const double bf16 = FromBf16Bits(b);
      if (std::isfinite(bf16)) {
        CAPTURE(bits);
        REQUIRE(ToBf16Bits(bf16) == b);
      }
    }
  }

  TEST_CASE("bf16: float32's upper half, rounded to nearest even") {
    CHECK(ToBf16Bits(1.0) == 0x3F80);
    CHECK(ToBf16Bits(-1.5) == 0xBFC0);
    CHECK(ToBf16Bits(1.0 + std::ldexp(1.0, -8)) == 0x3F80);      // a tie: to even
    CHECK(ToBf16Bits(1.0 + 3 * std::ldexp(1.0, -8)) == 0x3F82);  // a tie: to even (up)
    CHECK(ToBf16Bits(std::numeric_limits<float>::max()) == 0x7F80);  // rounds past the largest finite bf16
    CHECK(ToBf16Bits(std::ldexp(255.0, 120)) == 0x7F7F);             // the largest finite bf16
    CHECK(ToBf16Bits(std::ldexp(1.0, -133)) == 0x0001);              // the smallest subnormal
    CHECK(ToBf16Bits(std::ldexp(1.0, -126)) == 0x0080);              // the smallest normal
    CHECK(FromBf16Bits(0x0001) == std::ldexp(1.0, -133));
    // Any float whose lower half is zero converts to exactly its upper half.
    for (float value : {0.15625f, -2.75f, 1e-20f, 6.5e20f}) {
      std::uint32_t bits = 0;
      std::memcpy(&bits, &value, 4);
      bits &= 0xFFFF0000u;
      float exact = 0;
      std::memcpy(&exact, &bits, 4);
      CHECK(ToBf16Bits(exact) == static_cast<std::uint16_t>(bits >> 16));
      CHECK(FromBf16Bits(static_cast<std::uint16_t>(bits >> 16)) == static_cast<double>(exact));
    }
  }

  TEST_CASE("f16 and bf16 round a double once: just above a tie goes up, though float would make it the tie") {
    // 1 + half an ulp + a little: float32 keeps only the tie, which would
    // then round to even (down); one rounding from double goes up.
    const double above_bf16_tie = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
    CHECK(static_cast<double>(static_cast<float>(above_bf16_tie)) == 1.0 + std::ldexp(1.0, -8));
    CHECK(ToBf16Bits(above_bf16_tie) == 0x3F81);
    CHECK(ToBf16Bits(-above_bf16_tie) == 0xBF81);
    const double above_f16_tie = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
    CHECK(static_cast<double>(static_cast<float>(above_f16_tie)) == 1.0 + std::ldexp(1.0, -11));
    CHECK(ToF16Bits(above_f16_tie) == 0x3C01);
    // The same just below a tie goes down.
    CHECK(ToBf16Bits(1.0 + std::ldexp(1.0, -8) - std::ldexp(1.0, -40)) == 0x3F80);
    CHECK(ToF16Bits(1.0 + std::ldexp(1.0, -11) - std::ldexp(1.0, -40)) == 0x3C00);
  }

  TEST_CASE("f16 and bf16: random doubles over every binade round to the nearest encoding, ties to even") {
    std::mt19937_64 random(7);
    std::uniform_real_distribution<double> unit(1.0, 2.0);
    for (int i = 0; i < 200000; ++i) {
      // f16 from below its smallest subnormal to past its largest finite, bf16 likewise.
      const double sign = (random() & 1) != 0 ? -1.0 : 1.0;
      const double f16 = sign * std::ldexp(unit(random), static_cast<int>(random() % 43) - 27);
      if (std::fabs(f16) < 65504.0) CheckNearest(f16, ToF16Bits(f16), &FromF16Bits);
      const double bf16 = sign * std::ldexp(unit(random), static_cast<int>(random() % 265) - 136);
      if (std::fabs(bf16) < std::ldexp(255.0, 120)) CheckNearest(bf16, ToBf16Bits(bf16), &FromBf16Bits);
    }
    // Exact ties between every pair of neighbouring f16 encodings below 2^-10, to even.
    for (std::uint16_t bits = 0; bits < 0x1400; ++bits) {
      const double tie = (FromF16Bits(bits) + FromF16Bits(static_cast<std::uint16_t>(bits + 1))) / 2;
      CHECK(ToF16Bits(tie) == ((bits & 1) == 0 ? bits : bits + 1));
    }
  }

  TEST_CASE("the types' names, sizes and C++ types") {
    CHECK(ParseScalarType("f16") == ScalarType::kF16);
    CHECK(ParseScalarType("bf16") == ScalarType::kBF16);
    CHECK(SizeOf(ScalarType::kF16) == 2);
    CHECK(SizeOf(ScalarType::kBF16) == 2);
    CHECK(CppType(ScalarType::kF16) == "_Float16");
    CHECK(CppType(ScalarType::kBF16) == "uint16_t");
    CHECK(IsFloating(ScalarType::kBF16));
  }
}
