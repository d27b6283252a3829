// What drawing a task's inputs costs per element (evaluators/runner/inputs.h):
// the runner fills every input set with FillInput once per run, and before
// each round of timed samples draws a share of every slot's inputs afresh
// with DrawAfresh (fresh_inputs.h), within a budget of the reference's time:
// the cheaper a draw, the larger the share that budget buys.
//
//   BM_Fill/TYPE/DIST         every element of a buffer, in order
//   BM_DrawAfresh/TYPE/DIST   a tenth of the elements, at random positions
//   BM_Seeds/secret           a draw's seed from SecretSeeds (getrandom(2) in
//                             blocks of 512: secret_seeds.h), two per argument
//                             and call slot each round
//   BM_Seeds/mt19937_64       the same from a Mersenne twister, as before
//
// items_per_second: elements drawn a second; 1M elements a buffer (4 MiB of
// f32: past L2).

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/scalar_type.h"
#include "evaluators/job.h"
#include "evaluators/runner/inputs.h"
#include "evaluators/runner/secret_seeds.h"

namespace {

using kestrel::InitSpec;
using kestrel::ScalarType;
using kestrel::runner::DrawAfresh;
using kestrel::runner::FillInput;
using kestrel::runner::InputKey;

constexpr std::int64_t kElements = 1 << 20;

kestrel::JobArg Arg(ScalarType type, InitSpec::Dist dist) {
  kestrel::JobArg arg;
  arg.name = "x";
  arg.role = kestrel::ArgRole::kInput;
  arg.type = type;
  arg.count = kElements;
  arg.init.dist = dist;
  if (dist == InitSpec::Dist::kInt) arg.init.lo = -8, arg.init.hi = 8;
  return arg;
}

void BM_Fill(benchmark::State& state, ScalarType type, InitSpec::Dist dist) {
  const kestrel::JobArg arg = Arg(type, dist);
  std::vector<std::byte> out(kElements * kestrel::SizeOf(type));
  int set = 0;
  for (auto _ : state) {
    FillInput(arg, InputKey{1, 0, set++}, 0, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * kElements);
}

void BM_DrawAfresh(benchmark::State& state, ScalarType type, InitSpec::Dist dist) {
  const kestrel::JobArg arg = Arg(type, dist);
  std::vector<std::byte> out(kElements * kestrel::SizeOf(type));
  FillInput(arg, InputKey{1, 0, 0}, 0, out.data());
  std::uint64_t seed = 1;
  for (auto _ : state) {
    DrawAfresh(arg, {seed, ~seed}, kElements / 10, out.data());
    ++seed;
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * (kElements / 10));
}

template <class Seeds>
void BM_Seeds(benchmark::State& state) {
  Seeds seeds;
  for (auto _ : state) benchmark::DoNotOptimize(seeds());
  state.SetItemsProcessed(state.iterations());
}

void Register() {
  benchmark::RegisterBenchmark("BM_Seeds/secret", BM_Seeds<kestrel::runner::SecretSeeds>);
  benchmark::RegisterBenchmark("BM_Seeds/mt19937_64", BM_Seeds<std::mt19937_64>);
  const std::pair<const char*, ScalarType> types[] = {
      {"f32", ScalarType::kF32}, {"f64", ScalarType::kF64}, {"bf16", ScalarType::kBF16},
      {"f16", ScalarType::kF16}, {"i32", ScalarType::kI32}, {"i8", ScalarType::kI8}};
  const std::pair<const char*, InitSpec::Dist> dists[] = {
      {"normal", InitSpec::Dist::kNormal}, {"uniform", InitSpec::Dist::kUniform}, {"int", InitSpec::Dist::kInt}};
  for (const auto& [type_name, type] : types) {
    for (const auto& [dist_name, dist] : dists) {
      const std::string suffix = std::string(type_name) + "/" + dist_name;
      benchmark::RegisterBenchmark(("BM_Fill/" + suffix).c_str(), BM_Fill, type, dist)->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("BM_DrawAfresh/" + suffix).c_str(), BM_DrawAfresh, type, dist)
          ->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Register();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
