// The CPU evaluator end to end on the scale task, with a kernel for each way
// a candidate can be good or bad (tests/evaluators/kernels/). One evaluator
// serves every case, and after each bad kernel it must still measure the
// reference: the engine survives every candidate.

#include "evaluators/build_cache.h"
#include "evaluators/evaluator.h"

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include <doctest.h>

#include "scale_task.h"
#include "tests/testing.h"

namespace kestrel {
namespace {

Evaluator& Shared() {
  static std::unique_ptr<Evaluator> evaluator = [] {
    auto made = MakeCpuEvaluator(testing::MakeScaleTask(), testing::FastOptions());
    if (!made) FAIL("MakeCpuEvaluator: " << made.error().message());
    return std::move(*made);
  }();
  return *evaluator;
}

Measurement Eval(const std::string& kernel, KnobValues knobs = {}) {
  Evaluator& evaluator = Shared();
  const Measurement measurement = evaluator.Evaluate(testing::MakeCandidate(evaluator, kernel, std::move(knobs)));
  INFO(kernel << ": " << ToString(measurement.outcome) << ": " << measurement.reason << "\n" << measurement.log);
  return measurement;
}

// The evaluator still measures a good kernel after whatever came before.
void CheckStillMeasures() {
  const Measurement good = Eval("scale_ref");
  CHECK(good.outcome == Outcome::kMeasured);
}

TEST_SUITE("cpu_evaluator") {
  TEST_CASE("the reference as a candidate is measured at speedup ~1") {
    const auto start = std::chrono::steady_clock::now();
    const Measurement m = Eval("scale_ref");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    MESSAGE("Evaluate of a trivial kernel: " << seconds << " s (measure " << m.eval_seconds << " s, build "
                                              << m.build_seconds << " s), speedup " << m.speedup);
    REQUIRE(m.outcome == Outcome::kMeasured);
    CHECK(m.reason.empty());
    REQUIRE(m.shapes.size() == 1);
    CHECK(m.shapes[0].shape.at("n") == 100000);
    CHECK(m.shapes[0].candidate.count >= 5);
    CHECK(m.shapes[0].reference.count >= 5);
    CHECK(m.shapes[0].candidate_seconds.size() == static_cast<std::size_t>(m.shapes[0].candidate.count));
    CHECK(m.speedup > 0.5);
    CHECK(m.speedup < 2.0);
    CHECK(m.input_sets == 3);
    CHECK(m.seed == 1);
    CHECK(m.eval_seconds > 0);
  }

  TEST_CASE("a slow candidate and a fast reference each reach min_time in the same rounds") {
    const Measurement m = Eval("scale_slow");
    REQUIRE(m.outcome == Outcome::kMeasured);
    REQUIRE(m.shapes.size() == 1);
    const ShapeTiming& shape = m.shapes[0];
    const auto sampled = [](const std::vector<double>& seconds, std::int64_t calls) {
      double sum = 0;
      for (double s : seconds) sum += s * static_cast<double>(calls);
      return sum;
    };
    const double candidate = sampled(shape.candidate_seconds, shape.candidate_calls_per_sample);
    const double reference = sampled(shape.reference_seconds, shape.reference_calls_per_sample);
    const double min_time = testing::FastOptions().measure.min_time_s;
    INFO("candidate sampled " << candidate << " s in " << shape.candidate.count << " samples of "
                              << shape.candidate_calls_per_sample << " calls; reference " << reference << " s in "
                              << shape.reference.count << " samples of " << shape.reference_calls_per_sample);
    CHECK(candidate >= min_time);
    CHECK(reference >= min_time);
    // With samples of one length for both, the slow candidate was sampled
    // until the fast reference had its min_time: about 5 x min_time here.
    CHECK(candidate <= 2.5 * min_time);
    CHECK(shape.reference_calls_per_sample > shape.candidate_calls_per_sample);
  }

  TEST_CASE("flush_cache: every candidate sample starts after the caches were written over") {
    CpuEvaluatorOptions options = testing::FastOptions();
    options.flush_cache = true;
    options.measure.run_timeout_s = 60;  // each sample is preceded by writing up to 128 MiB
    auto made = MakeCpuEvaluator(testing::MakeScaleTask(), options);
    REQUIRE_MESSAGE(made.has_value(), testing::ErrorOf(made));
    const Measurement m = (*made)->Evaluate(testing::MakeCandidate(**made, "scale_ref", {}));
    INFO(m.reason << "\n" << m.log);
    REQUIRE(m.outcome == Outcome::kMeasured);
    CHECK(m.log.find("caches flushed before each") != std::string::npos);
    // Without the switch, no flush is reported.
    CHECK(Eval("scale_ref").log.find("caches flushed") == std::string::npos);
  }

  TEST_CASE("C linkage and knob defines") {
    const Measurement m = Eval("scale_extern_c", {{"UNROLL", "4"}});
    CHECK(m.outcome == Outcome::kMeasured);
    CHECK(Eval("scale_extern_c").outcome == Outcome::kBuildFailed);  // UNROLL undefined: #error
  }

  TEST_CASE("a wrong result is wrong, with its worst mismatch") {
    const Measurement m = Eval("scale_wrong");
    REQUIRE(m.outcome == Outcome::kWrong);
    CHECK(m.reason.find("3 of 3 input sets differ on shape n=100000") == 0);
    CHECK(m.reason.find("y[50000]") != std::string::npos);
    REQUIRE_FALSE(m.mismatches.empty());
    CHECK(m.mismatches[0].arg == "y");
    CHECK((m.mismatches[0].index == 50000 || m.mismatches[0].index == 3));  // n / 2 on either shape
    CHECK(m.mismatches[0].actual - m.mismatches[0].expected == doctest::Approx(0.5).epsilon(0.01));
    CHECK(m.log.find("worst mismatches") != std::string::npos);
    CheckStillMeasures();
  }

  TEST_CASE("a compile error is build_failed with the compiler's message") {
    const Measurement m = Eval("scale_compile_error");
    REQUIRE(m.outcome == Outcome::kBuildFailed);
    CHECK(m.reason.find("error") != std::string::npos);
    CHECK(m.reason.find("undeclared_variable") != std::string::npos);
    CHECK(m.log.find("kernel.cpp") != std::string::npos);
    const Measurement undefined = Eval("scale_undefined_symbol");
    REQUIRE(undefined.outcome == Outcome::kBuildFailed);
    CHECK(undefined.log.find("missing_helper") != std::string::npos);
    CheckStillMeasures();
  }

  TEST_CASE("a kernel's source compiles in the sandbox: it can read no file of this machine into its build") {
    // `#include` of a file outside the build printed its lines into the
    // build log (stored, and quoted to the LLM's fix prompt); `.incbin`
    // put the whole file into the kernel.
    testing::TempDir dir;
    const std::filesystem::path secret = dir / "secret.txt";
    testing::WriteFile(secret, "int kestrel_canary_7f3a = sk_live_canary_7f3a;\n");
    Evaluator& evaluator = Shared();
    const std::string include = "#include \"" + secret.string() + "\"\n" + testing::KernelSource("scale_ref");
    const Measurement included =
        evaluator.Evaluate(Candidate{include, {}, evaluator.Toolchain(), evaluator.Flags()});
    INFO(ToString(included.outcome) << ": " << included.reason << "\n" << included.log);
    CHECK(included.outcome == Outcome::kBuildFailed);
    CHECK(included.log.find("secret.txt") != std::string::npos);  // not found there
    CHECK(included.log.find("sk_live_canary_7f3a") == std::string::npos);
    CHECK(included.reason.find("sk_live_canary_7f3a") == std::string::npos);
    const std::string incbin = "__asm__(\".section .rodata\\n.incbin \\\"" + secret.string() +
                               "\\\"\\n.text\");\n" + testing::KernelSource("scale_ref");
    const Measurement embedded = evaluator.Evaluate(Candidate{incbin, {}, evaluator.Toolchain(), evaluator.Flags()});
    INFO(ToString(embedded.outcome) << ": " << embedded.reason << "\n" << embedded.log);
    CHECK(embedded.outcome == Outcome::kBuildFailed);
    CheckStillMeasures();
  }

  TEST_CASE("a segfault is crashed by SIGSEGV") {
    const Measurement m = Eval("scale_segfault");
    REQUIRE(m.outcome == Outcome::kCrashed);
    CHECK(m.reason.find("killed by SIGSEGV") == 0);
    CheckStillMeasures();
  }

  TEST_CASE("an abort is crashed by SIGABRT") {
    const Measurement m = Eval("scale_abort");
    REQUIRE(m.outcome == Outcome::kCrashed);
    CHECK(m.reason.find("SIGABRT") != std::string::npos);
    CheckStillMeasures();
  }

  TEST_CASE("an infinite loop times out promptly") {
    const auto start = std::chrono::steady_clock::now();
    const Measurement m = Eval("scale_infinite_loop");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    REQUIRE(m.outcome == Outcome::kTimedOut);
    CHECK(m.reason.find("timed out after 3s") == 0);
    CHECK(seconds < 3 + 3);
    CheckStillMeasures();
  }

  TEST_CASE("modifying an input is wrong") {
    const Measurement m = Eval("scale_modifies_input");
    REQUIRE(m.outcome == Outcome::kWrong);
    CHECK(m.reason.find("modified its input x") == 0);
    CheckStillMeasures();
  }

  TEST_CASE("hidden state and reading the output before writing it are wrong") {
    for (const char* kernel : {"scale_hidden_state", "scale_reads_output"}) {
      const Measurement m = Eval(kernel);
      REQUIRE(m.outcome == Outcome::kWrong);
      CHECK(m.reason.find("non-deterministic") == 0);
    }
    CheckStillMeasures();
  }

  TEST_CASE("a result printed by the kernel is not believed") {
    const Measurement fake = Eval("scale_fake_result");
    CHECK(fake.outcome == Outcome::kWrong);
    CHECK(fake.log.find("timings") != std::string::npos);  // what it printed is only logged
    const Measurement exited = Eval("scale_fake_exit");
    CHECK(exited.outcome == Outcome::kCrashed);
    CHECK(exited.reason.find("before it reported") != std::string::npos);
    CheckStillMeasures();
  }

  TEST_CASE("builds are content-addressed and thread-safe") {
    Evaluator& evaluator = Shared();
    const Candidate candidate = testing::MakeCandidate(evaluator, "scale_extern_c", {{"UNROLL", "2"}});
    std::vector<std::thread> threads;
    std::vector<BuildResult> results(4);
    for (int i = 0; i < 4; ++i) threads.emplace_back([&, i] { results[i] = evaluator.Build(candidate); });
    for (auto& thread : threads) thread.join();
    for (const auto& result : results) {
      CHECK(result.ok);
      CHECK(result.library == results[0].library);
    }
    CHECK(evaluator.Measure(candidate, results[0]).outcome == Outcome::kMeasured);
  }

  TEST_CASE("BuildCache: one build per identity however many ask at once; a throwing or withdrawn build is retried") {
    BuildCache cache;
    std::atomic<int> builds{0};
    const auto slow_build = [&] {
      const int n = ++builds;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      BuildResult built;
      built.ok = true;
      built.library = "/lib" + std::to_string(n) + ".so";
      return built;
    };
    std::vector<std::thread> threads;
    std::vector<BuildResult> results(6);
    for (int i = 0; i < 6; ++i) {
      threads.emplace_back([&, i] { results[i] = cache.Get(i % 2 == 0 ? "a" : "b", slow_build); });
    }
    for (auto& thread : threads) thread.join();
    CHECK(builds == 2);
    for (int i = 0; i < 6; ++i) CHECK(results[i].library == results[i % 2].library);
    CHECK(results[0].library != results[1].library);

    int attempts = 0;
    const auto flaky = [&] {
      if (++attempts == 1) throw std::runtime_error("disk full");
      BuildResult built;
      built.ok = true;
      return built;
    };
    const BuildResult failed = cache.Get("c", flaky);
    CHECK_FALSE(failed.ok);
    CHECK(failed.log == "error: cannot build: disk full\n");
    CHECK(cache.Get("c", flaky).ok);
    CHECK(attempts == 2);

    // A build whose job was withdrawn at a stop built nothing: not kept.
    int tries = 0;
    const auto withdrawn_once = [&] {
      BuildResult built;
      built.withdrawn = ++tries == 1;
      built.ok = !built.withdrawn;
      return built;
    };
    CHECK(cache.Get("d", withdrawn_once).withdrawn);
    CHECK(cache.Get("d", withdrawn_once).ok);
    CHECK(cache.Get("d", withdrawn_once).ok);
    CHECK(tries == 2);
  }

  TEST_CASE("a failed build passed to Measure is build_failed with its log") {
    BuildResult failed;
    failed.log = "kernel.cpp:1:1: error: nope\n";
    const Measurement m = Shared().Measure(Candidate{}, failed);
    CHECK(m.outcome == Outcome::kBuildFailed);
    CHECK(m.reason == "kernel.cpp:1:1: error: nope");
    CHECK(m.log == failed.log);
  }

  TEST_CASE("identity of the evaluator") {
    Evaluator& evaluator = Shared();
    CHECK_FALSE(evaluator.Toolchain().empty());
    CHECK(evaluator.Toolchain().find('\n') == std::string::npos);
    CHECK(evaluator.Flags() == std::vector<std::string>{"-O2"});
    CHECK(evaluator.Host().cores > 0);
  }

  TEST_CASE("a bad task is refused when the evaluator is made") {
    Task broken = testing::MakeScaleTask();
    broken.reference.text = "void scale_add(const float* x) {}\n";
    auto refused = MakeCpuEvaluator(broken, testing::FastOptions());
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().IsInvalidArgument());
    CHECK(refused.error().message().find("does not compile") != std::string::npos);

    Task constant = testing::MakeScaleTask();
    constant.reference.text =
        "#include <cstdint>\nvoid scale_add(const float*, float* y, int64_t n, float) "
        "{ for (int64_t i = 0; i < n; ++i) y[i] = 1; }\n";
    auto near_constant = MakeCpuEvaluator(constant, testing::FastOptions());
    REQUIRE_FALSE(near_constant.has_value());
    CHECK(near_constant.error().message().find("constant") != std::string::npos);

    Task crashing = testing::MakeScaleTask();
    crashing.reference.text = testing::KernelSource("scale_segfault");
    auto crashed = MakeCpuEvaluator(crashing, testing::FastOptions());
    REQUIRE_FALSE(crashed.has_value());
    CHECK(crashed.error().message().find("SIGSEGV") != std::string::npos);
  }
}

}  // namespace
}  // namespace kestrel
