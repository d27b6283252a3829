// The supervisor's comparisons of a candidate's outputs with the
// reference's (evaluators/compare.h): OutputComparer::Add, as the check of
// every input set runs it, and FirstMismatch, as the re-check of timed calls
// runs it, on buffers that differ by a few ulps in every element (what an
// honest reordering of a sum gives; identical bytes take a memcmp instead).

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "evaluators/compare.h"

namespace kestrel {
namespace {

struct Buffers {
  Job job;
  std::vector<std::byte> expected, actual;
};

// One shape, one output of `count` elements of `type`, and two buffers a
// relative 1e-6 apart.
Buffers Make(ScalarType type, std::int64_t count) {
  Buffers b;
  JobShape shape;
  shape.label = "n=" + std::to_string(count);
  JobArg out;
  out.name = "y";
  out.role = ArgRole::kOutput;
  out.type = type;
  out.count = count;
  shape.args.push_back(out);
  b.job.shapes.push_back(shape);
  b.job.input_sets = 1;
  b.expected.resize(static_cast<std::size_t>(count) * SizeOf(type));
  b.actual.resize(b.expected.size());
  std::mt19937 random(7);
  std::normal_distribution<double> normal;
  for (std::int64_t i = 0; i < count; ++i) {
    const double e = normal(random);
    const double a = e * (1 + 1e-6);
    if (type == ScalarType::kF32) {
      const float ef = static_cast<float>(e), af = static_cast<float>(a);
      std::memcpy(b.expected.data() + 4 * i, &ef, 4);
      std::memcpy(b.actual.data() + 4 * i, &af, 4);
    } else {
      std::memcpy(b.expected.data() + 8 * i, &e, 8);
      std::memcpy(b.actual.data() + 8 * i, &a, 8);
    }
  }
  return b;
}

void BM_CompareBuffer(benchmark::State& state) {
  const auto type = state.range(0) == 32 ? ScalarType::kF32 : ScalarType::kF64;
  Buffers b = Make(type, state.range(1));
  const OutputSegment segment{0, 0, 0, 0, b.expected.size()};
  for (auto _ : state) {
    OutputComparer comparer(b.job, Tolerance{1e-4, 1e-7});
    comparer.Add(segment, b.expected.data(), b.actual.data());
    auto verdict = comparer.Finish();
    if (!verdict.ok) state.SkipWithError("the buffers should pass");
    benchmark::DoNotOptimize(verdict);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(2 * b.expected.size()));
}
BENCHMARK(BM_CompareBuffer)->ArgNames({"bits", "elements"})->Args({32, 1 << 21})->Args({64, 1 << 20})->Unit(benchmark::kMillisecond);

void BM_FirstMismatch(benchmark::State& state) {
  Buffers b = Make(ScalarType::kF32, state.range(0));
  for (auto _ : state) {
    const std::int64_t at = FirstMismatch(ScalarType::kF32, b.actual.data(), b.expected.data(), state.range(0),
                                          Tolerance{1e-4, 1e-7});
    if (at >= 0) state.SkipWithError("the buffers should match");
    benchmark::DoNotOptimize(at);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(2 * b.expected.size()));
}
BENCHMARK(BM_FirstMismatch)->ArgName("elements")->Arg(1 << 21)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kestrel

BENCHMARK_MAIN();
