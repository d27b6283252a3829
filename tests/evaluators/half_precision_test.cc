// Tasks with f16 and bf16 buffers end to end through the CPU evaluator: the
// harness draws and stores the inputs, poisons the outputs with the type's
// NaN, reads them back and compares them in double; a kernel sees
// `_Float16` for f16 and `uint16_t` bits for bf16.

#include <doctest.h>

#include <string>

#include "evaluators/evaluator.h"
#include "scale_task.h"

namespace kestrel {
namespace {

// y = a * x + 1 over n elements of `type`, a an f32 scalar.
Task HalfTask(ScalarType type) {
  Task task = testing::MakeScaleTask();
  task.name = "scale_" + std::string(ToString(type));
  for (ArgSpec& arg : task.args) {
    if (arg.IsBuffer()) arg.type = type;
  }
  task.shapes = {{{"n", 50000}}};
  task.check_shapes = {{{"n", 7}}};
  // An honest kernel rounds once, as the reference does: one unit in the
  // last place at most.
  task.tolerance = type == ScalarType::kF16 ? Tolerance{1e-3, 1e-3} : Tolerance{8e-3, 1e-2};
  return task;
}

// The f16 kernels: computing in double (the reference) and in float.
constexpr const char* kF16Reference = R"(#include <cstdint>
void scale_add(const _Float16* x, _Float16* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) y[i] = (_Float16)((double)a * (double)x[i] + 1.0);
}
)";
constexpr const char* kF16Float = R"(#include <cstdint>
void scale_add(const _Float16* x, _Float16* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) y[i] = (_Float16)(a * (float)x[i] + 1.0f);
}
)";
// Forgets the last element: it keeps the harness's NaN poison, which differs call to call.
constexpr const char* kF16SkipsLast = R"(#include <cstdint>
void scale_add(const _Float16* x, _Float16* y, int64_t n, float a) {
  for (int64_t i = 0; i + 1 < n; ++i) y[i] = (_Float16)(a * (float)x[i] + 1.0f);
}
)";
// Off by a factor: wrong everywhere.
constexpr const char* kF16Wrong = R"(#include <cstdint>
void scale_add(const _Float16* x, _Float16* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) y[i] = (_Float16)(1.01f * a * (float)x[i] + 1.0f);
}
)";

// bf16 as bits: widen to float by a shift, narrow with round to nearest even.
constexpr const char* kBf16Prelude = R"(#include <cstdint>
#include <cstring>
static inline float Widen(uint16_t b) { uint32_t u = (uint32_t)b << 16; float f; std::memcpy(&f, &u, 4); return f; }
static inline uint16_t Narrow(double d) {
  float f = (float)d; uint32_t u; std::memcpy(&u, &f, 4);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
)";

Measurement Evaluate(Evaluator& evaluator, const std::string& source) {
  return evaluator.Evaluate(Candidate{source, {}, evaluator.Toolchain(), evaluator.Flags()});
}

}  // namespace

TEST_SUITE("half precision") {
  TEST_CASE("f16: a kernel in float passes within the type's tolerance; a skipped element and a wrong one fail") {
    Task task = HalfTask(ScalarType::kF16);
    task.reference = {"reference.cpp", kF16Reference};
    auto made = MakeCpuEvaluator(task, testing::FastOptions());
    REQUIRE_MESSAGE(made.has_value(), testing::ErrorOf(made));
    Evaluator& evaluator = **made;
    const Measurement same = Evaluate(evaluator, kF16Reference);
    CHECK_MESSAGE(same.outcome == Outcome::kMeasured, same.reason);
    const Measurement in_float = Evaluate(evaluator, kF16Float);
    CHECK_MESSAGE(in_float.outcome == Outcome::kMeasured, in_float.reason);
    const Measurement skipped = Evaluate(evaluator, kF16SkipsLast);
    CHECK(skipped.outcome == Outcome::kWrong);
    // The two calls found different poisons (the type's two NaNs) in the element it left.
    CHECK_MESSAGE(skipped.reason.find("non-deterministic") != std::string::npos, skipped.reason);
    const Measurement wrong = Evaluate(evaluator, kF16Wrong);
    CHECK(wrong.outcome == Outcome::kWrong);
  }

  TEST_CASE("bf16: bits in uint16_t, rounded by the kernel; a truncating kernel stays within tolerance, a wrong one fails") {
    Task task = HalfTask(ScalarType::kBF16);
    const std::string reference = std::string(kBf16Prelude) +
                                  "void scale_add(const uint16_t* x, uint16_t* y, int64_t n, float a) {\n"
                                  "  for (int64_t i = 0; i < n; ++i) y[i] = Narrow((double)a * Widen(x[i]) + 1.0);\n}\n";
    task.reference = {"reference.cpp", reference};
    auto made = MakeCpuEvaluator(task, testing::FastOptions());
    REQUIRE_MESSAGE(made.has_value(), testing::ErrorOf(made));
    Evaluator& evaluator = **made;
    const Measurement same = Evaluate(evaluator, reference);
    CHECK_MESSAGE(same.outcome == Outcome::kMeasured, same.reason);
    const std::string truncating = std::string(kBf16Prelude) +
                                   "void scale_add(const uint16_t* x, uint16_t* y, int64_t n, float a) {\n"
                                   "  for (int64_t i = 0; i < n; ++i) {\n"
                                   "    float f = a * Widen(x[i]) + 1.0f; uint32_t u; std::memcpy(&u, &f, 4);\n"
                                   "    y[i] = (uint16_t)(u >> 16);\n  }\n}\n";
    const Measurement truncated = Evaluate(evaluator, truncating);
    CHECK_MESSAGE(truncated.outcome == Outcome::kMeasured, truncated.reason);
    const std::string doubled = std::string(kBf16Prelude) +
                                "void scale_add(const uint16_t* x, uint16_t* y, int64_t n, float a) {\n"
                                "  for (int64_t i = 0; i < n; ++i) y[i] = Narrow(2.0 * a * Widen(x[i]) + 1.0);\n}\n";
    CHECK(Evaluate(evaluator, doubled).outcome == Outcome::kWrong);
  }
}

}  // namespace kestrel
