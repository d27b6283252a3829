// The run's prepared inputs (job.h, runner/prepared_inputs.h) and the
// evaluate job that checks and times a candidate in one runner: a file
// deleted, truncated or overwritten during a run is made again and the
// evaluation still measured; kestrel-runner refuses such a file with a
// message naming it; a wrong kernel is not timed, and one whose checks
// fail but which crashes only once timed is still reported wrong.

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <doctest.h>

#include "evaluators/job.h"
#include "evaluators/subprocess.h"
#include "evaluators/task_layout.h"
#include "scale_task.h"

namespace kestrel {
namespace {

namespace fs = std::filesystem;

struct Fixture {
  testing::TempDir dir;
  std::unique_ptr<Evaluator> evaluator;
  Fixture() {
    CpuEvaluatorOptions options = testing::FastOptions();
    options.work_dir = dir.path() / "work";
    auto made = MakeCpuEvaluator(testing::MakeScaleTask(), options);
    if (!made) FAIL("MakeCpuEvaluator: " << made.error().message());
    evaluator = std::move(*made);
  }
  fs::path Inputs() const { return dir.path() / "work" / "reference" / "inputs.bin"; }
  Measurement Eval(const std::string& kernel) {
    const Measurement m = evaluator->Evaluate(testing::MakeCandidate(*evaluator, kernel));
    INFO(kernel << ": " << ToString(m.outcome) << ": " << m.reason << "\n" << m.log);
    return m;
  }
};

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_SUITE("prepared_inputs") {
  TEST_CASE("prepared once per run; deleted, truncated or overwritten, it is made again and nothing is lost") {
    Fixture f;
    REQUIRE(fs::exists(f.Inputs()));
    const auto size = fs::file_size(f.Inputs());
    const std::string pristine = Slurp(f.Inputs());
    CHECK(pristine.substr(0, 8) == std::string(kPreparedMagic, 8));
    CHECK(f.Eval("scale_ref").outcome == Outcome::kMeasured);

    SUBCASE("deleted") { fs::remove(f.Inputs()); }
    SUBCASE("truncated") { fs::resize_file(f.Inputs(), size / 2); }
    SUBCASE("its header overwritten") {
      std::fstream file(f.Inputs(), std::ios::binary | std::ios::in | std::ios::out);
      file.seekp(8);
      file.write("garbage!", 8);
    }
    SUBCASE("a FIFO in its place") {
      fs::remove(f.Inputs());
      REQUIRE(::mkfifo(f.Inputs().c_str(), 0600) == 0);
    }
    const Measurement again = f.Eval("scale_ref");
    INFO(again.reason << "\n" << again.log);
    CHECK(again.outcome == Outcome::kMeasured);
    CHECK(fs::is_regular_file(f.Inputs()));
    CHECK(Slurp(f.Inputs()) == pristine);  // the same seed draws the same inputs
  }

  TEST_CASE("kestrel-runner refuses a missing, truncated or foreign inputs file, naming it") {
    Fixture f;
    const Task task = testing::MakeScaleTask();
    auto shapes = LayoutShapes(task, false);
    REQUIRE(shapes);
    Job job;
    job.mode = "outputs";
    job.nonce = "n1";
    job.libraries = {f.dir.path() / "work" / "reference" / "kernel.so"};
    job.shapes = *shapes;
    job.input_sets = 3;
    job.output_file = f.dir.path() / "out.bin";
    job.worker = testing::WorkerPath();
    const fs::path file = f.dir.path() / "inputs.bin";
    job.inputs_file = file;
    std::string expected;
    SUBCASE("missing") { expected = "cannot open the prepared inputs " + file.string(); }
    SUBCASE("truncated") {
      fs::copy_file(f.Inputs(), file);
      fs::resize_file(file, fs::file_size(file) - 4);
      expected = "has " + std::to_string(fs::file_size(file)) + " bytes instead of";
    }
    SUBCASE("made for another job") {
      fs::copy_file(f.Inputs(), file);
      job.seed = 2;  // the same size, another draw
      expected = "were prepared for another job";
    }
    SubprocessOptions options;
    options.argv = {testing::RunnerPath().string(), "-"};
    options.stdin_data = JobToJson(job);
    options.result_pipe = true;
    options.timeout_s = 30;
    options.cwd = f.dir.path();
    auto ran = RunSubprocess(options);
    REQUIRE(ran);
    auto result = ParseJobResult(ran->result);
    REQUIRE_MESSAGE(result, ran->log);
    INFO(result->error);
    CHECK(result->error.find(expected) != std::string::npos);
    CHECK(result->checks.empty());
  }

  TEST_CASE("a wrong kernel is not timed") {
    Fixture f;
    const Measurement m = f.Eval("scale_wrong");
    CHECK(m.outcome == Outcome::kWrong);
    CHECK(m.log.find("outputs checked") != std::string::npos);
    CHECK(m.log.find("candidate CPU time") == std::string::npos);  // the timing's own line
  }

  TEST_CASE("wrong in its checks and crashing once timed: wrong, from the checks") {
    Fixture f;
    const Measurement m = f.Eval("scale_l2_then_crash");
    INFO(m.reason << "\n" << m.log);
    CHECK(m.outcome == Outcome::kWrong);
    CHECK(m.reason.find("relative L2 error") != std::string::npos);
    CHECK(f.Eval("scale_ref").outcome == Outcome::kMeasured);
  }
}

}  // namespace
}  // namespace kestrel
