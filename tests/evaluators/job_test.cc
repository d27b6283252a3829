// The engine <-> runner protocol, the task layout and the output comparison.

#include "evaluators/job.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include <doctest.h>

#include "evaluators/compare.h"
#include "evaluators/task_layout.h"
#include "scale_task.h"

namespace kestrel {
namespace {

Job ScaleJob() {
  Job job;
  job.mode = "outputs";
  job.nonce = "abc";
  job.input_sets = 2;
  auto shapes = LayoutShapes(testing::MakeScaleTask(), false);
  REQUIRE(shapes.has_value());
  job.shapes = *shapes;
  return job;
}

void WriteFloats(const std::filesystem::path& path, const std::vector<float>& values) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
}

TEST_SUITE("job") {
  TEST_CASE("layout of the scale task") {
    const Job job = ScaleJob();
    REQUIRE(job.shapes.size() == 2);
    CHECK(job.shapes[0].label == "n=100000");
    CHECK(job.shapes[1].label == "n=7");
    CHECK(job.shapes[1].args[0].count == 7);
    CHECK(job.shapes[1].args[2].value == 7);
    CHECK(job.shapes[1].args[3].value == 2.0);
    const auto segments = OutputSegments(job);
    REQUIRE(segments.size() == 4);  // 2 shapes x 2 sets x 1 output
    CHECK(segments[2].shape_index == 1);
    CHECK(segments[2].offset == 2 * 100000 * 4);
    CHECK(segments[3].bytes == 7 * 4);

    Task task = testing::MakeScaleTask();
    task.shapes = {{{"m", 3}}};
    CHECK_FALSE(LayoutShapes(task, true).has_value());
  }

  TEST_CASE("a job and a result survive the round trip") {
    Job job = ScaleJob();
    job.libraries = {"/tmp/a.so", "/tmp/b.so"};
    job.shapes[0].args[0].init.dist = InitSpec::Dist::kUniform;
    job.flush_bytes = 64 << 20;
    auto parsed = ParseJob(JobToJson(job));
    REQUIRE(parsed.has_value());
    CHECK(JobToJson(*parsed) == JobToJson(job));
    CHECK(parsed->flush_bytes == 64 << 20);
    job.flush_bytes = -1;
    CHECK_FALSE(ParseJob(JobToJson(job)).has_value());
    job.flush_bytes = 0;

    // A baseline's job lets its worker JIT (Job::allow_jit); a job says nothing of it by default.
    CHECK_FALSE(parsed->allow_jit);
    job.allow_jit = true;
    auto jit = ParseJob(JobToJson(job));
    REQUIRE(jit.has_value());
    CHECK(jit->allow_jit);
    job.allow_jit = false;

    // A profile job's wrapper (docs/PROFILES.md); its file is a plain name in the worker's scratch folder.
    job.worker_wrapper = {"/usr/bin/valgrind", "--tool=cachegrind", "--"};
    job.wrapper_file = "cachegrind.out";
    job.wrapper_output = "/tmp/eval/cachegrind.out";
    auto wrapped = ParseJob(JobToJson(job));
    REQUIRE(wrapped.has_value());
    CHECK(wrapped->worker_wrapper == job.worker_wrapper);
    CHECK(wrapped->wrapper_file == "cachegrind.out");
    CHECK(wrapped->wrapper_output == "/tmp/eval/cachegrind.out");
    for (const char* escape : {"../cachegrind.out", "/etc/passwd", ".."}) {
      job.wrapper_file = escape;
      CHECK_FALSE(ParseJob(JobToJson(job)).has_value());
    }

    job.wrapper_file = "cachegrind.out";
    // A counting job (Job::count_events) names known events, in outputs mode.
    job.count_events = {"cycles", "page-faults"};
    job.counted_calls = 12;
    auto counting = ParseJob(JobToJson(job));
    REQUIRE(counting.has_value());
    CHECK(counting->count_events == job.count_events);
    CHECK(counting->counted_calls == 12);
    job.count_events = {"cycles", "cpu-wizardry"};
    auto unknown = ParseJob(JobToJson(job));
    REQUIRE_FALSE(unknown.has_value());
    CHECK(unknown.error().message().find("unknown counter event 'cpu-wizardry'") != std::string::npos);
    job.count_events.clear();
    CHECK_FALSE(ParseJob(JobToJson(job)).has_value());  // calls to count, nothing to count
    job.count_events = {"cycles"};
    job.counted_calls = -1;
    CHECK_FALSE(ParseJob(JobToJson(job)).has_value());
    job.counted_calls = 3;
    job.mode = "time";
    CHECK_FALSE(ParseJob(JobToJson(job)).has_value());
    job.mode = "outputs";
    job.count_events.clear();
    job.counted_calls = 0;

    JobResult result;
    result.nonce = "n";
    result.checks = {{1, 2, {"x"}, true}};
    result.timings = {{{1e-6, 2e-6}, {3e-6}, 10, 20, 2}};
    auto back = ParseJobResult(JobResultToJson(result));
    REQUIRE(back.has_value());
    CHECK(back->checks[0].inputs_modified == std::vector<std::string>{"x"});
    CHECK(back->checks[0].nondeterministic);
    CHECK(back->timings[0].candidate.size() == 2);
    CHECK(back->timings[0].reference_batch == 20);
    CHECK(back->timings[0].flushes == 2);
    CHECK(back->counts.empty());
    result.counts = {{"page-faults", 130.5, 87, 0.002, 0.001334}};
    auto counted = ParseJobResult(JobResultToJson(result));
    REQUIRE(counted.has_value());
    REQUIRE(counted->counts.size() == 1);
    CHECK(counted->counts[0].name == "page-faults");
    CHECK(counted->counts[0].value == 130.5);
    CHECK(counted->counts[0].raw == 87);
    CHECK(counted->counts[0].running_s == 0.001334);
    result.counts.clear();
    result.counts_error = "perf_event_open(cycles): No such file or directory (ENOENT): ...";
    auto refused = ParseJobResult(JobResultToJson(result));
    REQUIRE(refused.has_value());
    CHECK(refused->counts_error == result.counts_error);

    CHECK_FALSE(ParseJobResult("not json").has_value());
    CHECK_FALSE(ParseJobResult("{\"nonce\": 3}").has_value());
    CHECK_FALSE(ParseJob("{\"mode\": \"dance\"}").has_value());
  }
}

TEST_SUITE("compare") {
  TEST_CASE("tolerance, NaN and the worst mismatches") {
    testing::TempDir dir;
    Job job = ScaleJob();
    job.shapes[0].args[0].count = job.shapes[0].args[1].count = 4;  // small timed shape
    std::vector<float> reference = {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 5, 6, 7};
    WriteFloats(dir / "ref.bin", reference);
    WriteFloats(dir / "same.bin", reference);
    const Tolerance tolerance{1e-3, 1e-6};
    auto same = CompareOutputs(job, dir / "ref.bin", dir / "same.bin", tolerance);
    REQUIRE(same.has_value());
    CHECK(same->ok);

    std::vector<float> close = reference;
    close[0] *= 1.0005f;  // inside rtol
    WriteFloats(dir / "close.bin", close);
    CHECK(CompareOutputs(job, dir / "ref.bin", dir / "close.bin", tolerance)->ok);

    std::vector<float> bad = reference;
    bad[8 + 2] = 3.5f;            // shape n=7, set 0, y[2]
    bad[8 + 7 + 4] = std::nanf("");  // shape n=7, set 1, y[4]
    WriteFloats(dir / "bad.bin", bad);
    auto wrong = CompareOutputs(job, dir / "ref.bin", dir / "bad.bin", tolerance);
    REQUIRE(wrong.has_value());
    CHECK_FALSE(wrong->ok);
    CHECK(wrong->reason.find("2 of 2 input sets differ on shape n=7") == 0);
    REQUIRE(wrong->worst.size() == 2);
    CHECK(wrong->worst[0].index == 4);  // NaN is the worst
    CHECK(std::isnan(wrong->worst[0].actual));
    CHECK(wrong->worst[1].arg == "y");
    CHECK(wrong->worst[1].index == 2);
    CHECK(wrong->worst[1].expected == 3.0);
    CHECK(wrong->worst[1].actual == 3.5);

    WriteFloats(dir / "short.bin", {1, 2, 3});
    auto truncated = CompareOutputs(job, dir / "ref.bin", dir / "short.bin", tolerance);
    REQUIRE_FALSE(truncated.has_value());
    CHECK(truncated.error().code() == ErrorCode::kCorruption);
  }

  TEST_CASE("long buffers: each element is judged the same wherever it falls in a block") {
    // The comparisons test a block of elements at once and only look at
    // elements one by one in a block that fails; this walks special
    // elements over block edges and checks the verdict of the element test.
    constexpr std::int64_t n = 10000;  // several blocks and a partial one
    Job job;
    JobShape shape;
    shape.label = "n=10000";
    JobArg y;
    y.name = "y";
    y.role = ArgRole::kOutput;
    y.type = ScalarType::kF32;
    y.count = n;
    shape.args.push_back(y);
    job.shapes.push_back(shape);
    job.input_sets = 1;
    const Tolerance tolerance{1e-3, 1e-6};
    std::vector<float> reference(n);
    for (std::int64_t i = 0; i < n; ++i) reference[i] = std::sin(0.01f * static_cast<float>(i)) + 2.0f;
    const OutputSegment segment{0, 0, 0, 0, n * sizeof(float)};
    const auto bytes = [](const std::vector<float>& v) { return reinterpret_cast<const std::byte*>(v.data()); };
    const auto verdict = [&](const std::vector<float>& expected, const std::vector<float>& actual) {
      OutputComparer comparer(job, tolerance);
      comparer.Add(segment, bytes(expected), bytes(actual));
      return comparer.Finish();
    };
    for (const std::int64_t at : {std::int64_t{0}, std::int64_t{7}, std::int64_t{2047}, std::int64_t{2048},
                                  std::int64_t{4100}, n - 1}) {
      CAPTURE(at);
      std::vector<float> close = reference;
      for (auto& v : close) v *= 1.0002f;  // inside rtol everywhere, and inside the L2 bound
      CHECK(verdict(reference, close).ok);
      CHECK(FirstMismatch(ScalarType::kF32, bytes(close), bytes(reference), n, tolerance) == -1);

      std::vector<float> off = close;
      off[at] = reference[at] * 1.01f;  // one element out of tolerance
      auto one = verdict(reference, off);
      CHECK_FALSE(one.ok);
      REQUIRE(one.worst.size() == 1);
      CHECK(one.worst[0].index == at);
      CHECK(FirstMismatch(ScalarType::kF32, bytes(off), bytes(reference), n, tolerance) == at);

      std::vector<float> nan = close;
      nan[at] = std::nanf("");
      CHECK(FirstMismatch(ScalarType::kF32, bytes(nan), bytes(reference), n, tolerance) == at);
      CHECK(verdict(reference, nan).worst.at(0).index == at);

      // A non-finite reference element: only the same value passes.
      std::vector<float> special = reference;
      special[at] = std::numeric_limits<float>::infinity();
      std::vector<float> same = close;
      same[at] = special[at];
      CHECK(verdict(special, same).ok);
      CHECK(FirstMismatch(ScalarType::kF32, bytes(same), bytes(special), n, tolerance) == -1);
      std::vector<float> finite = close;  // a finite answer where infinity was expected
      CHECK(FirstMismatch(ScalarType::kF32, bytes(finite), bytes(special), n, tolerance) == at);
      CHECK_FALSE(verdict(special, finite).ok);
      special[at] = std::nanf("");
      same[at] = std::nanf("");
      CHECK(verdict(special, same).ok);
      CHECK(FirstMismatch(ScalarType::kF32, bytes(same), bytes(special), n, tolerance) == -1);
    }
    // Every element inside its own tolerance, but all of it spent: the L2 bound fails.
    std::vector<float> spent = reference;
    for (auto& v : spent) v *= 1.0009f;
    const auto l2 = verdict(reference, spent);
    CHECK_FALSE(l2.ok);
    CHECK(l2.worst.empty());
    CHECK(l2.reason.find("relative L2 error") == 0);
  }

  TEST_CASE("a near-constant reference output is refused") {
    testing::TempDir dir;
    Job job = ScaleJob();
    job.shapes[0].args[0].count = job.shapes[0].args[1].count = 4;
    std::vector<float> varied = {1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    WriteFloats(dir / "varied.bin", varied);
    CHECK(CheckReferenceVaries(job, dir / "varied.bin", {1e-4, 1e-7}, 1).has_value());
    std::vector<float> constant(22, 0.0f);
    for (int i = 0; i < 8; ++i) constant[i] = 1.0f + 1e-6f * static_cast<float>(i);
    WriteFloats(dir / "constant.bin", constant);
    auto refused = CheckReferenceVaries(job, dir / "constant.bin", {1e-4, 1e-7}, 1);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().IsInvalidArgument());
  }

  TEST_CASE("the host report of kestrel-runner --host survives the round trip; a malformed one is refused") {
    const HostInfo here = DetectHost();
    auto back = ParseHost(HostToJson(here));
    REQUIRE_MESSAGE(back.has_value(), testing::ErrorOf(back));
    CHECK(back->Key() == here.Key());
    CHECK(back->cores == here.cores);
    CHECK(back->l2_bytes == here.l2_bytes);
    CHECK(back->memory_bytes == here.memory_bytes);
    CHECK(back->isa == here.isa);
    auto bad = ParseHost(R"({"name": "n1"})");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message().find("malformed host report") == 0);
  }
}

}  // namespace
}  // namespace kestrel
