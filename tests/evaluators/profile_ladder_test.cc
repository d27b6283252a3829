// The profile ladder (issue 18): known kernels of one task, built by the
// real compiler with -O3 -march=native and profiled by every source this
// machine has (CpuEvaluator::AddProfileSources): objdump's instruction mix,
// the compiler's remarks and cachegrind's simulated counts. A scalar loop,
// an auto-vectorized one and an intrinsic one (AVX-512 where the CPU has
// it, else AVX2) of y = a * x + 1; a strided and a cache-friendly transpose.
// Their profiles differ where they must.

#include <doctest.h>

#include "core/simulated_shape.h"

#include <memory>
#include <string>

#include "evaluators/compiler.h"
#include "evaluators/compiler_remarks.h"
#include "evaluators/cpu_evaluator.h"
#include "evaluators/instruction_mix.h"
#include "evaluators/shim.h"
#include "evaluators/profile_sources.h"
#include "scale_task.h"

namespace kestrel {
namespace {

CpuEvaluatorOptions LadderOptions() {
  CpuEvaluatorOptions options = testing::FastOptions();
  options.flags = {"-O3", "-march=native"};
  return options;
}

// `counters`: evaluator.profile_counters ("auto": the PMU where there is one).
CpuEvaluator& Evaluator(const Task& task, const std::string& counters = "auto") {
  static std::map<std::string, std::unique_ptr<CpuEvaluator>> evaluators;
  auto& evaluator = evaluators[task.name + "/" + counters];
  if (!evaluator) {
    CpuEvaluatorOptions options = LadderOptions();
    options.profile_counters = counters;
    auto made = CpuEvaluator::Create(task, options);
    if (!made) FAIL("CpuEvaluator::Create: " << made.error().message());
    evaluator = std::move(*made);
  }
  return *evaluator;
}

Task TransposeTask() {
  Task task;
  task.name = "transpose";
  task.description = "out = in transposed, n x n";
  task.language = "cpp";
  task.entry = "transpose";
  ArgSpec in{"in", ArgRole::kInput, ScalarType::kF32, {"n", "n"}, {}, 0.0};
  ArgSpec out{"out", ArgRole::kOutput, ScalarType::kF32, {"n", "n"}, {}, 0.0};
  ArgSpec n{"n", ArgRole::kDim, ScalarType::kI64, {}, {}, 0.0};
  task.args = {in, out, n};
  // Rows of 4000 bytes: not a power of two, so that the strided writes
  // miss for want of capacity (1000 lines per column > L1's), not for
  // aliasing, and the tiles' 32 lines stay in L1.
  task.shapes = {{{"n", 1000}}};
  task.check_shapes = {{{"n", 37}}};
  task.tolerance = {0, 0};
  task.bytes = "8*n*n";
  task.reference = {"transpose_strided.cpp", testing::KernelSource("transpose_strided")};
  return task;
}

// Where the machine has a readable PMU, profiles count with it (source
// "pmu"); elsewhere cachegrind simulates the counts (source "cachegrind").
bool HasPmu() {
  static const bool pmu = PmuUnavailableReason().empty();
  return pmu;
}

// `flags`: the candidate's own compiler flags (default: the evaluator's).
Profile ProfileOf(CpuEvaluator& evaluator, const std::string& kernel, std::vector<std::string> flags = {}) {
  Candidate candidate = testing::MakeCandidate(evaluator, kernel);
  if (!flags.empty()) candidate.flags = std::move(flags);
  const BuildResult build = evaluator.Build(candidate);
  REQUIRE_MESSAGE(build.ok, build.log);
  Profile profile;
  evaluator.AddProfileSources(candidate, build, profile);
  INFO(kernel << ":\n" << ProfileDigest(profile));
  REQUIRE(profile.mix);
  REQUIRE(profile.remarks);
  if (HasPmu()) {
    // The PMU counts whatever the code is.
    REQUIRE(profile.counters);
    CHECK(profile.counters->source == "pmu");
    return profile;
  }
  REQUIRE_MESSAGE(CachegrindValgrind(), "valgrind is not installed (scripts/setup installs it)");
  // Valgrind has no AVX-512: such code is not simulated, and the profile says why.
  CHECK(profile.counters.has_value() == (profile.mix->vector_bits < 512));
  if (!profile.counters) CHECK(ProfileDigest(profile).find("cachegrind: valgrind cannot run AVX-512") != std::string::npos);
  return profile;
}

int IsaBits() {
  static const int bits = IsaVectorBits(DetectHost().isa);
  return bits;
}

TEST_CASE("scalar, auto-vectorized and intrinsic rungs differ in packed share, vector width and instructions") {
  CpuEvaluator& evaluator = Evaluator(testing::MakeScaleTask());
  REQUIRE_MESSAGE(IsaBits() >= 256, "the ladder needs AVX2 at least");
  const Profile scalar = ProfileOf(evaluator, "scale_scalar");
  const Profile vectorized = ProfileOf(evaluator, "scale_vectorized");
  const Profile intrinsics = ProfileOf(evaluator, "scale_intrinsics");

  // What the code is.
  CHECK(scalar.mix->packed_fp == 0);
  CHECK(scalar.mix->scalar_fp > 0);
  CHECK(scalar.mix->vector_bits == 0);
  CHECK(vectorized.mix->packed_fp > 0);
  CHECK(vectorized.mix->vector_bits >= 256);
  CHECK(vectorized.mix->packed_fp * 100 / (vectorized.mix->packed_fp + vectorized.mix->scalar_fp) >
        scalar.mix->packed_fp * 100 / (scalar.mix->packed_fp + scalar.mix->scalar_fp));
  CHECK(intrinsics.mix->packed_fp > 0);
  CHECK(intrinsics.mix->fma > 0);
  CHECK(intrinsics.mix->vector_bits == IsaBits());
  for (const Profile* profile : {&scalar, &vectorized, &intrinsics}) {
    CHECK(profile->mix->isa_vector_bits == IsaBits());
    CHECK(profile->mix->calls.empty());
  }

  // What the compiler did with the loop (kernel.cpp line 5 in both files).
  CHECK(scalar.remarks->vectorized.empty());
  REQUIRE(!vectorized.remarks->vectorized.empty());
  CHECK(vectorized.remarks->vectorized[0].rfind("kernel.cpp:5: ", 0) == 0);
  CHECK(vectorized.remarks->vectorized[0].find("vectorized") != std::string::npos);

  // Simulated counts: fewer instructions per element with vectors. Valgrind
  // cannot run AVX-512, so the vectorized rung is simulated as AVX2 code.
  const Profile avx2 = ProfileOf(evaluator, "scale_vectorized", {"-O3", "-march=native", "-mno-avx512f"});
  REQUIRE(scalar.counters);
  REQUIRE(avx2.counters);
  CHECK(avx2.mix->vector_bits == 256);
  CHECK(scalar.counters->source == (HasPmu() ? "pmu" : "cachegrind"));
  CHECK(scalar.counters->shape == "n=100000");
  CHECK(*scalar.counters->instructions > 2.0);  // load, multiply-add, store, loop
  CHECK(*scalar.counters->instructions > 4 * *avx2.counters->instructions);

  // The digests say so in words.
  const std::string scalar_digest = ProfileDigest(scalar);
  const std::string intrinsics_digest = ProfileDigest(intrinsics);
  CHECK(scalar_digest.find("(0% packed)") != std::string::npos);
  const std::string widest = IsaBits() == 512 ? "512 bits (zmm) of 512 available (zmm)"
                                              : "256 bits (ymm) of 256 available (ymm)";
  CHECK(intrinsics_digest.find("widest vector " + widest) != std::string::npos);
  CHECK(scalar_digest.find("widest vector 0 bits of") != std::string::npos);
  CHECK(scalar_digest != intrinsics_digest);
}

TEST_CASE("a strided transpose misses L1 far more often than a cache-friendly one") {
  CpuEvaluator& evaluator = Evaluator(TransposeTask());
  const Profile strided = ProfileOf(evaluator, "transpose_strided");
  const Profile blocked = ProfileOf(evaluator, "transpose_blocked");
  if (HasPmu()) {
    // The PMU's L1 counts are of loads, and this transpose's misses are
    // its stores: the clock says it instead.
    REQUIRE(strided.counters->cycles);
    REQUIRE(blocked.counters->cycles);
    CHECK(*strided.counters->cycles > 1.5 * *blocked.counters->cycles);
    CHECK(ProfileDigest(strided) != ProfileDigest(blocked));
    return;
  }
  REQUIRE(strided.counters->d1_miss_rate);
  REQUIRE(blocked.counters->d1_miss_rate);
  // One line per written element against about two per 16-element tile row.
  CHECK(*strided.counters->d1_miss_rate > 0.3);
  CHECK(*blocked.counters->d1_miss_rate < 0.15);
  CHECK(*strided.counters->d1_miss_rate > 3 * *blocked.counters->d1_miss_rate);
  CHECK(*strided.counters->cache_misses > *blocked.counters->cache_misses);
  CHECK(ProfileDigest(strided) != ProfileDigest(blocked));
}

TEST_CASE("a measured candidate's profile: its measurement's roofline and scaling, then every source, each timed") {
  CpuEvaluator& evaluator = Evaluator(TransposeTask());
  CHECK(evaluator.CanProfile());
  const Candidate candidate = testing::MakeCandidate(evaluator, "transpose_blocked");
  const BuildResult build = evaluator.Build(candidate);
  REQUIRE(build.ok);
  const Measurement measured = evaluator.Measure(candidate, build);
  REQUIRE_MESSAGE(measured.outcome == Outcome::kMeasured, measured.reason);
  auto profile = evaluator.ProfileBuilt(candidate, build, measured);
  REQUIRE_MESSAGE(profile, testing::ErrorOf(profile));
  INFO(ProfileDigest(*profile));
  REQUIRE(profile->roofline);
  CHECK(profile->roofline->shape == "n=1000");
  CHECK(profile->roofline->gbps > 0);
  REQUIRE(profile->scaling.size() == 1);
  CHECK(profile->scaling[0].elements == 1e6);
  CHECK(profile->mix);
  CHECK(profile->remarks);
  CHECK(profile->counters);
  std::vector<std::string> sources;
  double sum = 0;
  for (const auto& cost : profile->costs) {
    sources.push_back(cost.source);
    sum += cost.seconds;
  }
  CHECK(sources == std::vector<std::string>{"objdump", "compiler remarks", HasPmu() ? "pmu" : "cachegrind"});
  CHECK(profile->seconds >= sum);
  // GCC wrote the remarks during the build: the profile read them and
  // compiled nothing more; they are what a compile for remarks prints.
  const std::filesystem::path dir = build.library.parent_path();
  CHECK(std::filesystem::exists(dir / "remarks.txt"));
  CHECK_FALSE(std::filesystem::exists(dir / "remarks.o"));
  CompileRequest request;
  request.compiler = "c++";
  request.flags = candidate.flags;
  for (const auto& define : candidate.KnobDefines()) request.flags.push_back(define);
  request.source = dir / "shim.cpp";
  request.library = dir / "kernel.so";
  auto compiled = CompileWithRemarks(request, evaluator.Toolchain());
  REQUIRE_MESSAGE(compiled, testing::ErrorOf(compiled));
  REQUIRE(!compiled->missed.empty());
  CHECK(profile->remarks->vectorized == compiled->vectorized);
  CHECK(profile->remarks->missed == compiled->missed);
  // The same profile again: the simulated counts do not move.
  if (HasPmu()) return;  // the PMU's do, a little
  auto again = evaluator.ProfileBuilt(candidate, build, measured);
  REQUIRE(again);
  CHECK(*again->counters->instructions == *profile->counters->instructions);
  CHECK(*again->counters->d1_miss_rate == *profile->counters->d1_miss_rate);
}

TEST_CASE("each compiler's remarks: GCC's -fopt-info and, where clang is installed, clang's -Rpass") {
  const Task task = testing::MakeScaleTask();
  testing::TempDir dir;
  testing::WriteFile(dir / "kernel.cpp", testing::KernelSource("scale_vectorized"));
  testing::WriteFile(dir / "shim.cpp", GenerateShim(task, "kernel.cpp"));
  for (const std::string compiler : {"g++", "clang++"}) {
    auto version = CompilerVersion(compiler);
    if (!version) {
      REQUIRE_MESSAGE(compiler != "g++", version.error().message());
      MESSAGE("clang++ is not installed: its remarks are not tested here");
      continue;
    }
    CompileRequest request;
    request.compiler = compiler;
    request.flags = {"-O3", "-march=native"};
    request.source = dir / "shim.cpp";
    request.library = dir / "kernel.so";
    auto remarks = CompileWithRemarks(request, *version);
    REQUIRE_MESSAGE(remarks, testing::ErrorOf(remarks));
    INFO(compiler << ": " << ProfileDigest(Profile{.remarks = *remarks}));
    CHECK(remarks->compiler == *version);
    REQUIRE(!remarks->vectorized.empty());
    CHECK(remarks->vectorized[0].rfind("kernel.cpp:5: ", 0) == 0);
    CHECK(remarks->vectorized[0].find(compiler == "g++" ? "loop vectorized" : "vectorized loop") != std::string::npos);
    CHECK(std::filesystem::exists(dir / "remarks.o"));
  }
  // Remarks written by the build: only where the compiler takes the flags.
  const auto gcc = CompilerVersion("g++");
  REQUIRE(gcc);
  CHECK(AcceptsRemarkFile("g++", *gcc, *LocalExecutor(), dir.path()));
  CHECK_FALSE(AcceptsRemarkFile("false", *gcc, *LocalExecutor(), dir.path()));
  CHECK_FALSE(AcceptsRemarkFile("g++", "Debian clang version 14.0.6", *LocalExecutor(), dir.path()));
  CHECK_FALSE(ReadRemarkFile(dir / "no-remarks.txt", *gcc));
  // A compiler that fails is an error naming it, never a profile with made-up remarks.
  CompileRequest broken;
  broken.compiler = "g++";
  broken.flags = {"-O3", "-DKESTREL_NO_SUCH_HEADER", "-include", "no_such_header.h"};
  broken.source = dir / "shim.cpp";
  auto failed = CompileWithRemarks(broken, "g++ 12");
  REQUIRE(!failed);
  CHECK(failed.error().message().find("g++ with -fopt-info-vec-optimized") != std::string::npos);
}

TEST_CASE("cachegrind simulates a cut-down shape, and counts per element as on the whole one") {
  REQUIRE_MESSAGE(CachegrindValgrind(), "valgrind is not installed (scripts/setup installs it)");
  // 4M elements, 32 MB of buffers: cut to n = 1M (2M buffer elements, 8 MB).
  Task ranged = testing::MakeScaleTask();
  ranged.name = "scale_add_4m";
  ranged.shapes = {{{"n", 4194304}}};
  ranged.shape_ranges = {{"n", {1, 4194304}}};
  Task whole = ranged;
  whole.name = "scale_add_4m_whole";
  whole.shape_ranges.clear();  // nothing to cut along
  REQUIRE(SimulatedShape(ranged, ranged.shapes[0]) == Shape{{"n", 1048576}});
  const auto counters = [](const Task& task) {
    CpuEvaluator& evaluator = Evaluator(task, "cachegrind");
    Candidate candidate = testing::MakeCandidate(evaluator, "scale_vectorized");
    candidate.flags = {"-O3", "-march=native", "-mno-avx512f"};
    const BuildResult build = evaluator.Build(candidate);
    REQUIRE_MESSAGE(build.ok, build.log);
    Profile profile;
    evaluator.AddProfileSources(candidate, build, profile);
    INFO(ProfileDigest(profile));
    REQUIRE(profile.counters);
    return *profile.counters;
  };
  const CounterProfile cut = counters(ranged);
  const CounterProfile full = counters(whole);
  CHECK(cut.shape == "n=1048576");
  CHECK(full.shape == "n=4194304");
  REQUIRE(cut.instructions);
  REQUIRE(full.instructions);
  REQUIRE(cut.d1_miss_rate);
  REQUIRE(full.d1_miss_rate);
  // A streaming kernel: the same instructions and misses per element.
  CHECK(*cut.instructions == doctest::Approx(*full.instructions).epsilon(0.01));
  CHECK(*cut.d1_miss_rate == doctest::Approx(*full.d1_miss_rate).epsilon(0.02));
}

TEST_CASE("a kernel that works less under valgrind gets no counts: the simulated call's outputs are judged") {
  REQUIRE_MESSAGE(CachegrindValgrind(), "valgrind is not installed (scripts/setup installs it)");
  CpuEvaluator& evaluator = Evaluator(testing::MakeScaleTask(), "cachegrind");
  Candidate candidate = testing::MakeCandidate(evaluator, "scale_vectorized");
  candidate.source = testing::ReadFile(testing::SourceDir() / "tests" / "evaluators" / "adversarial" /
                                       "p_idles_under_valgrind.cpp");
  candidate.flags = {"-O2"};  // no AVX-512, which valgrind cannot run
  const BuildResult build = evaluator.Build(candidate);
  REQUIRE_MESSAGE(build.ok, build.log);
  // Honest where it is measured.
  const Measurement measured = evaluator.Measure(candidate, build);
  REQUIRE_MESSAGE(measured.outcome == Outcome::kMeasured, measured.reason);
  Profile profile;
  evaluator.AddProfileSources(candidate, build, profile, &measured);
  const std::string digest = ProfileDigest(profile);
  INFO(digest);
  CHECK_FALSE(profile.counters.has_value());
  CHECK(digest.find("the simulated call's outputs are not the reference's") != std::string::npos);
  // An honest kernel's simulated outputs pass the same judgement.
  Candidate honest = testing::MakeCandidate(evaluator, "scale_vectorized");
  honest.flags = {"-O2"};
  const BuildResult honest_build = evaluator.Build(honest);
  REQUIRE_MESSAGE(honest_build.ok, honest_build.log);
  Profile counted;
  evaluator.AddProfileSources(honest, honest_build, counted);
  CHECK(counted.counters.has_value());
}

TEST_CASE("a kernel that writes its own cachegrind.out does not get its counts into the profile") {
  REQUIRE_MESSAGE(CachegrindValgrind(), "valgrind is not installed (scripts/setup installs it)");
  CpuEvaluator& evaluator = Evaluator(testing::MakeScaleTask(), "cachegrind");
  Candidate candidate = testing::MakeCandidate(evaluator, "scale_forges_cachegrind");
  candidate.flags = {"-O2"};  // no AVX-512, which valgrind cannot run
  const BuildResult build = evaluator.Build(candidate);
  REQUIRE_MESSAGE(build.ok, build.log);
  Profile profile;
  evaluator.AddProfileSources(candidate, build, profile);
  const std::string digest = ProfileDigest(profile);
  INFO(digest);
  if (profile.counters) {
    // Valgrind wrote over the forgery: its counts are the kernel's real ones
    // (the forgery claims 2 instructions in all, far under one per element).
    REQUIRE(profile.counters->instructions);
    CHECK(*profile.counters->instructions > 0.1);
  } else {
    CHECK(digest.find("not valgrind's file") != std::string::npos);
  }
}

}  // namespace
}  // namespace kestrel
