// What a profile costs (docs/PROFILES.md) next to the evaluation it follows,
// for three built-in tasks: each task's seed built and measured by the CPU
// evaluator with its default options (a run's), then profiled as a run
// profiles it (CpuEvaluator::ProfileBuilt: the roofline and shape scaling
// from the measurement, then every source this machine has). Twice per task:
// with the evaluator's flags (-O3 -march=native) and with -mno-avx512f
// added, because valgrind cannot simulate AVX-512 code and skips it (on an
// AVX-512 host the first row shows the cost without cachegrind, the second
// with it). Prints a markdown section on stdout (scripts/bench puts it in
// docs/BENCHMARKS.md).
//
//   profile_bench [TASKS_DIR]   (default: the source tree's configs/tasks)

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/profile.h"
#include "core/task.h"
#include "evaluators/calibration.h"
#include "evaluators/cpu_evaluator.h"

#ifndef KESTREL_TASKS_DIR
#define KESTREL_TASKS_DIR "configs/tasks"
#endif

namespace kestrel {
namespace {

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double CostOf(const Profile& profile, const std::string& source) {
  for (const auto& cost : profile.costs) {
    if (cost.source == source) return cost.seconds;
  }
  return -1;
}

std::string Seconds(double seconds) { return seconds < 0 ? "skipped" : fmt::format("{:.2f}", seconds); }

int Main(int argc, char** argv) {
  const std::filesystem::path tasks_dir = argc > 1 ? argv[1] : KESTREL_TASKS_DIR;
  std::vector<std::string> rows;
  std::string digests;
  // The tasks: those named after the tasks folder, else six built-in ones
  // (streaming, row-wise with libm, strided, compute-bound, two-pass, stencil).
  std::vector<std::string> names = {"triad", "softmax", "transpose", "matmul", "layernorm", "stencil2d"};
  if (argc > 2) names.assign(argv + 2, argv + argc);
  for (const std::string& name_text : names) {
    const char* name = name_text.c_str();
    auto task = LoadTask(tasks_dir / name);
    if (!task) {
      std::fprintf(stderr, "profile_bench: %s\n", task.error().message().c_str());
      return 1;
    }
    auto evaluator = CpuEvaluator::Create(*task, CpuEvaluatorOptions{});
    if (!evaluator) {
      std::fprintf(stderr, "profile_bench: %s\n", evaluator.error().message().c_str());
      return 1;
    }
    // Judged against the host's roofline, as a run is (measured once, then
    // kept in the user's cache, as `kestrel eval` keeps it).
    if (auto calibration = CachedCalibration("c++", 1, (*evaluator)->Host())) {
      (*evaluator)->SetCalibration(*calibration);
    }
    for (const bool avx512 : {true, false}) {
      Candidate seed{task->seeds.at(0).text, {}, (*evaluator)->Toolchain(), (*evaluator)->Flags()};
      if (auto knobs = ParseKnobs(seed.source); knobs) seed.knobs = DefaultKnobs(*knobs);
      if (!avx512) seed.flags.push_back("-mno-avx512f");
      auto start = std::chrono::steady_clock::now();
      const BuildResult build = (*evaluator)->Build(seed);
      const double build_s = Since(start);
      start = std::chrono::steady_clock::now();
      const Measurement measured = (*evaluator)->Measure(seed, build);
      const double measure_s = Since(start);
      if (measured.outcome != Outcome::kMeasured) {
        std::fprintf(stderr, "profile_bench: %s's seed: %s: %s\n", name, std::string(ToString(measured.outcome)).c_str(),
                     measured.reason.c_str());
        return 1;
      }
      start = std::chrono::steady_clock::now();
      auto profiled = (*evaluator)->ProfileBuilt(seed, build, measured);
      const double profile_s = Since(start);
      if (!profiled) {
        std::fprintf(stderr, "profile_bench: %s: %s\n", name, profiled.error().message().c_str());
        return 1;
      }
      const Profile& profile = *profiled;
      const std::string digest = ProfileDigest(profile);
      const double evaluation_s = build_s + measure_s;
      rows.push_back(fmt::format("| {} | {} | {:.2f} ({:.2f} + {:.2f}) | {:.2f} | {:.0f}% | {} | {} | {} | {} | {} |",
                                 name, avx512 ? "-O3 -march=native" : "+ -mno-avx512f", evaluation_s, build_s,
                                 measure_s, profile_s, 100 * profile_s / evaluation_s,
                                 Seconds(CostOf(profile, "objdump")), Seconds(CostOf(profile, "compiler remarks")),
                                 Seconds(CostOf(profile, "cachegrind")), digest.size(), digest.size() / 4));
      if (!avx512) digests += fmt::format("\n`{}` (+ -mno-avx512f):\n\n```\n{}```\n", name, digest);
    }
  }
  std::printf("## profile_bench: what a profile costs next to its evaluation\n\n");
  std::printf("Seconds, wall clock, one candidate (the task's seed) each; evaluation = build + measure (the "
              "evaluator's defaults); profile = every source this machine has (objdump, a second compilation for "
              "the remarks, cachegrind on the smallest timed shape cut down, core/simulated_shape.h; no PMU here). Digest size in characters and "
              "tokens (characters / 4).\n\n");
  std::printf("| task | flags | evaluation s (build + measure) | profile s | profile / evaluation | objdump s | "
              "remarks s | cachegrind s | digest chars | digest tokens |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const auto& row : rows) std::printf("%s\n", row.c_str());
  std::printf("\nThe digests (without AVX-512):\n%s", digests.c_str());
  return 0;
}

}  // namespace
}  // namespace kestrel

int main(int argc, char** argv) { return kestrel::Main(argc, argv); }
