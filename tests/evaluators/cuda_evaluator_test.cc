// The CUDA evaluator (docs/CUDA.md). On any host with the CUDA toolkit: the
// built-in cuda tasks' shims, references and seeds compile with nvcc into a
// shared object exporting kestrel_entry, a syntax error is a failed build
// naming its line, and kestrel-cuda-runner and MakeCudaEvaluator report a
// missing GPU cleanly. The evaluations themselves need a GPU: those cases
// print "no CUDA device: skipped" and pass on a host without one.
//
// nvcc takes seconds per build: the cases here build 8 objects in all
// (plus 2 more with a GPU).

#include "evaluators/cuda_evaluator.h"
#include "evaluators/cpu_evaluator.h"

#include <dlfcn.h>

#include <set>
#include <string>

#include <doctest.h>

#include <nlohmann/json.hpp>

#include "core/candidate.h"
#include "core/task.h"
#include "evaluators/compiler.h"
#include "evaluators/job.h"
#include "evaluators/sandbox.h"
#include "evaluators/sandbox_args.h"
#include "evaluators/shim.h"
#include "evaluators/subprocess.h"
#include "evaluators/task_layout.h"
#include "testing.h"

namespace kestrel {
namespace {

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

Task LoadCudaTask(const std::string& name) {
  auto task = LoadTask(testing::TasksDir() / name);
  REQUIRE_MESSAGE(task.has_value(), testing::ErrorOf(task));
  return *task;
}

// The scratch dir shared by the cases (the softmax reference's build is
// reused by the runner's case).
const testing::TempDir& Scratch() {
  static testing::TempDir dir;
  return dir;
}

BuildResult Build(const Task& task, const std::string& source, const KnobValues& knobs, const std::string& dir) {
  Candidate candidate{source, knobs, "nvcc", {"-O3"}};
  return BuildCudaCandidate(task, candidate, Scratch() / dir, DefaultNvcc(), "sm_90", {"-O3"}, 300);
}

// dlopen (the kernel's rpath finds libcudart.so) and dlsym of kestrel_entry.
void CheckExportsEntry(const BuildResult& build) {
  REQUIRE_MESSAGE(build.ok, build.log);
  void* handle = ::dlopen(build.library.c_str(), RTLD_LAZY | RTLD_LOCAL);
  REQUIRE_MESSAGE(handle != nullptr, ::dlerror());
  CHECK(::dlsym(handle, kShimEntrySymbol) != nullptr);
  ::dlclose(handle);
}

const CudaDeviceReport& Devices() {
  static const CudaDeviceReport report = DetectCuda();
  return report;
}

bool HaveGpu() { return Devices().devices > 0; }

CudaEvaluatorOptions FastOptions() {
  CudaEvaluatorOptions options;
  options.measure.min_time_s = 0.05;
  options.measure.min_samples = 5;
  options.measure.run_timeout_s = 60;
  options.work_dir = Scratch() / "evaluator";
  options.runner_path = testing::Env("KESTREL_CUDA_RUNNER");
  return options;
}

TEST_SUITE("cuda_evaluator") {
  TEST_CASE("the cuda tasks' shims include kernel.cu and call the entry with device pointers") {
    const Task task = LoadCudaTask("softmax_cuda");
    CHECK(task.language == "cuda");
    const std::string shim = GenerateShim(task, "kernel.cu");
    CHECK(Contains(shim, "#include \"kernel.cu\""));
    CHECK(Contains(shim, "extern \"C\" void kestrel_entry(void* const* args)"));
    CHECK(Contains(shim, "softmax((const float*)args[0]"));
    CHECK(Contains(shim, "*(const int64_t*)args[3]"));
  }

  TEST_CASE("softmax_cuda: the reference and every knob value of the seed build into a kestrel_entry .so") {
    const Task task = LoadCudaTask("softmax_cuda");
    CheckExportsEntry(Build(task, task.reference.text, {}, "softmax_reference"));
    CHECK(testing::ReadFile(Scratch() / "softmax_reference" / "shim.cu") == GenerateShim(task, "kernel.cu"));
    auto knobs = ParseKnobs(task.seeds.at(0).text);
    REQUIRE(knobs.has_value());
    // Four builds cover every value of every knob (BLOCK has four values;
    // each other knob two).
    std::size_t builds = 0;
    for (const auto& knob : *knobs) builds = std::max(builds, knob.values.size());
    CHECK(builds == 4);
    std::set<std::string> hashes;
    for (std::size_t b = 0; b < builds; ++b) {
      KnobValues values;
      for (const auto& knob : *knobs) values[knob.name] = knob.values[b % knob.values.size()];
      std::string label;
      for (const auto& [name, value] : values) label += name + "=" + value + " ";
      CAPTURE(label);
      const BuildResult build = Build(task, task.seeds.at(0).text, values, "softmax_seed_" + std::to_string(b));
      CheckExportsEntry(build);
      // Every build here sets BLOCK differently: different code, so a different hash.
      CHECK(build.code_hash.size() == 64);
      CHECK(hashes.insert(build.code_hash).second);
      if (b == 0) {
        // The same code written differently (a comment, built in another
        // folder) is the same code; the hash comes again from a kept build.
        const BuildResult twin = Build(task, "// the same kernel, with a comment\n" + task.seeds.at(0).text, values,
                                       "softmax_seed_twin");
        REQUIRE_MESSAGE(twin.ok, twin.log);
        CHECK(twin.code_hash == build.code_hash);
        CHECK(Build(task, task.seeds.at(0).text, values, "softmax_seed_0").code_hash == build.code_hash);
      }
    }
  }

  TEST_CASE("matmul_cuda: the reference and the tiled seed build") {
    const Task task = LoadCudaTask("matmul_cuda");
    CheckExportsEntry(Build(task, task.reference.text, {}, "matmul_reference"));
    CheckExportsEntry(Build(task, task.seeds.at(0).text, {{"TILE", "32"}, {"WPT", "8"}, {"PAD", "1"}, {"UNROLL", "0"}},
                            "matmul_seed"));
  }

  TEST_CASE("a syntax error is a failed build with nvcc's message naming the line") {
    const Task task = LoadCudaTask("softmax_cuda");
    const std::string source =
        "#include <cstdint>\n"
        "void softmax(const float* x, float* y, int64_t rows, int64_t cols) {\n"
        "  int oops = ;\n"
        "}\n";
    const BuildResult build = Build(task, source, {}, "syntax_error");
    CHECK(!build.ok);
    CHECK(!std::filesystem::exists(Scratch() / "syntax_error" / "kernel.so"));
    const std::string first = FirstErrorLine(build.log);
    CAPTURE(build.log);
    CHECK(Contains(first, "kernel.cu(3)"));
    CHECK(Contains(first, "error"));
  }

  TEST_CASE("nvcc runs in the compiler's sandbox: a kernel's source can read no file of this machine") {
    const SandboxReport sandbox = DetectSandbox(Scratch().path());
    REQUIRE_MESSAGE(sandbox.bwrap, sandbox.bwrap_why);
    const Task task = LoadCudaTask("softmax_cuda");
    const std::filesystem::path secret = Scratch() / "secret.txt";
    testing::WriteFile(secret, "int kestrel_canary = sk_live_canary_cuda;\n");
    Candidate candidate{"#include \"" + secret.string() + "\"\n" + task.reference.text, {}, "nvcc", {"-O3"}};
    const BuildResult build = BuildCudaCandidate(task, candidate, Scratch() / "reads_secret", DefaultNvcc(), "sm_90",
                                                 {"-O3"}, 300, LocalExecutor(), sandbox.bwrap_path);
    INFO(build.log);
    CHECK_FALSE(build.ok);
    CHECK(Contains(build.log, "secret.txt"));
    CHECK_FALSE(Contains(build.log, "sk_live_canary_cuda"));
    // The reference itself builds in the same sandbox.
    Candidate honest{task.reference.text, {}, "nvcc", {"-O3"}};
    const BuildResult built = BuildCudaCandidate(task, honest, Scratch() / "sandboxed_reference", DefaultNvcc(),
                                                 "sm_90", {"-O3"}, 300, LocalExecutor(), sandbox.bwrap_path);
    CHECK_MESSAGE(built.ok, built.log);
  }

  TEST_CASE("a missing nvcc is a failed build, not an exception") {
    const Task task = LoadCudaTask("softmax_cuda");
    Candidate candidate{task.reference.text, {}, "nvcc", {"-O3"}};
    const BuildResult build =
        BuildCudaCandidate(task, candidate, Scratch() / "no_nvcc", "/nonexistent/nvcc", "sm_90", {"-O3"}, 30);
    CHECK(!build.ok);
    CHECK(Contains(build.log, "cannot run nvcc"));
  }

  TEST_CASE("kestrel-cuda-runner speaks the job protocol and reports a missing GPU cleanly") {
    const std::filesystem::path runner = testing::Env("KESTREL_CUDA_RUNNER");
    REQUIRE(std::filesystem::exists(runner));
    const Task task = LoadCudaTask("softmax_cuda");
    auto shapes = LayoutShapes(task, false);
    REQUIRE(shapes.has_value());
    const auto library = Scratch() / "softmax_reference" / "kernel.so";
    if (!std::filesystem::exists(library)) CheckExportsEntry(Build(task, task.reference.text, {}, "softmax_reference"));

    Job job;
    job.mode = "outputs";
    job.nonce = "0123456789abcdef";
    job.libraries = {library};
    job.input_sets = 2;
    job.shapes = *shapes;
    job.output_file = Scratch() / "runner_outputs.bin";
    const auto job_file = Scratch() / "runner_job.json";
    testing::WriteFile(job_file, JobToJson(job));

    SubprocessOptions options;
    options.argv = {runner.string(), job_file.string()};
    options.timeout_s = 120;
    options.result_pipe = true;
    auto ran = RunSubprocess(options);
    REQUIRE(ran.has_value());
    CAPTURE(ran->log);
    CHECK(!ran->timed_out);
    CHECK(ran->signal == 0);
    auto result = ParseJobResult(ran->result);
    REQUIRE_MESSAGE(result.has_value(), testing::ErrorOf(result));
    CHECK(result->nonce == job.nonce);
    if (!HaveGpu()) {
      CHECK(ran->exit_code == 3);
      CHECK(Contains(result->error, "no CUDA device"));
      CHECK(result->checks.empty());
    } else {
      CHECK(ran->exit_code == 0);
      CHECK(result->error.empty());
      CHECK(result->checks.size() == shapes->size() * 2);
      const auto segments = OutputSegments(job);
      CHECK(std::filesystem::file_size(job.output_file) == segments.back().offset + segments.back().bytes);
    }

    // --probe agrees with DetectCuda.
    SubprocessOptions probe;
    probe.argv = {runner.string(), "--probe"};
    probe.timeout_s = 60;
    probe.result_pipe = true;
    auto probed = RunSubprocess(probe);
    REQUIRE(probed.has_value());
    CHECK(probed->signal == 0);
    const auto parsed = nlohmann::json::parse(probed->result, nullptr, false);
    REQUIRE(parsed.is_object());
    CHECK(parsed.value("devices", -1) == Devices().devices);
    CHECK(probed->exit_code == (HaveGpu() ? 0 : 3));
  }

  TEST_CASE("the runner starts in its sandbox, finds what a machine without the sandbox finds, and sees nothing else") {
    REQUIRE_MESSAGE(DetectSandbox().bwrap, DetectSandbox().bwrap_why);
    const std::filesystem::path runner = testing::Env("KESTREL_CUDA_RUNNER");
    testing::TempDir dir;
    ProgramView view;
    view.read_only = {runner};
    view.writable = {dir.path()};
    view.devices = NvidiaDevices();
    view.sys = true;
    view.cwd = dir.path();
    auto confine = DefaultConfinePath();
    REQUIRE_MESSAGE(confine.has_value(), testing::ErrorOf(confine));
    view.confine = *confine;  // the runner and libcudart under the seccomp denylist
    const auto sandbox = ProgramSandboxArgs(DetectSandbox().bwrap_path, ProgramEnvironment({}, dir.path()), view);
    const CudaDeviceReport inside = ProbeCudaDevices(runner, *LocalExecutor(), dir.path(), sandbox);
    INFO(inside.detail);
    // The runner loaded libcudart and answered on fd 3 through bubblewrap.
    CHECK_FALSE(Contains(inside.detail, "cannot run"));
    CHECK_FALSE(Contains(inside.detail, "without a result"));
    CHECK(inside.devices == Devices().devices);
    CHECK_FALSE(inside.host.cpu_model.empty());
    // The same view around a shell: no home, no database, no process of ours.
    SubprocessOptions look;
    look.argv = sandbox;
    look.argv.insert(look.argv.end(), {"/bin/sh", "-c", "ls /proc | grep -c '^[0-9]'; test -e /root || test -e /home || echo hidden; test -w " +
                                                             runner.string() + " || echo read-only; unshare -U true 2>/dev/null || echo filtered"});
    look.timeout_s = 30;
    auto looked = RunSubprocess(look);
    REQUIRE(looked.has_value());
    INFO(looked->log);
    CHECK(looked->Succeeded());
    CHECK(Contains(looked->log, "hidden"));
    CHECK(Contains(looked->log, "read-only"));
    CHECK(Contains(looked->log, "filtered"));
    CHECK(std::stoi(looked->log) <= 6);
  }

  TEST_CASE("DetectCuda finds nvcc and reports the devices") {
    const CudaDeviceReport& report = Devices();
    MESSAGE("nvcc: " << report.nvcc_version << "; devices: " << report.devices << " (" << report.detail << ")");
    CHECK(report.nvcc_found);
    CHECK(Contains(report.nvcc_version, "cuda"));
    CHECK(report.devices >= 0);
    if (report.devices == 0) CHECK(Contains(report.detail, "no CUDA device"));
  }

  TEST_CASE("MakeCudaEvaluator refuses a cpp task, and a host without a GPU with a clear error") {
    auto cpp = FindTask("softmax", {testing::TasksDir()});
    REQUIRE(cpp.has_value());
    auto refused = MakeCudaEvaluator(*cpp, FastOptions());
    REQUIRE(!refused.has_value());
    CHECK(refused.error().code() == ErrorCode::kInvalidArgument);
    if (HaveGpu()) {
      MESSAGE("this host has a CUDA device: the no-device case is not checked");
      return;
    }
    auto made = MakeCudaEvaluator(LoadCudaTask("softmax_cuda"), FastOptions());
    REQUIRE(!made.has_value());
    CHECK(made.error().code() == ErrorCode::kUnsupported);
    CHECK(Contains(made.error().message(), "no CUDA device found"));
    CHECK(Contains(made.error().message(), "softmax_cuda"));
  }

  TEST_CASE("on a GPU: a measured kernel's profile has its time per element and says whether ncu could run") {
    if (!HaveGpu()) {
      MESSAGE("no CUDA device: skipped");
      return;
    }
    const Task task = LoadCudaTask("softmax_cuda");
    auto made = MakeCudaEvaluator(task, FastOptions());
    REQUIRE_MESSAGE(made.has_value(), testing::ErrorOf(made));
    Evaluator& evaluator = **made;
    CHECK(evaluator.CanProfile());
    const Candidate reference{task.reference.text, {}, evaluator.Toolchain(), evaluator.Flags()};
    const BuildResult build = evaluator.Build(reference);
    const Measurement measured = evaluator.Measure(reference, build);
    REQUIRE(measured.outcome == Outcome::kMeasured);
    auto profile = evaluator.ProfileBuilt(reference, build, measured);
    REQUIRE_MESSAGE(profile.has_value(), testing::ErrorOf(profile));
    CHECK(profile->scaling.size() == task.shapes.size());
    for (const auto& point : profile->scaling) CHECK(point.ns_per_element > 0);
    REQUIRE(profile->unavailable.size() == 1);
    CHECK(profile->unavailable[0].rfind("ncu: ", 0) == 0);
  }

  TEST_CASE("on a GPU: the reference measures ~1x, a wrong kernel and one modifying its input are wrong") {
    if (!HaveGpu()) {
      MESSAGE("no CUDA device: skipped");
      return;
    }
    const Task task = LoadCudaTask("softmax_cuda");
    auto made = MakeCudaEvaluator(task, FastOptions());
    REQUIRE_MESSAGE(made.has_value(), testing::ErrorOf(made));
    Evaluator& evaluator = **made;
    const auto eval = [&](const std::string& source) {
      const Measurement m = evaluator.Evaluate(Candidate{source, {}, evaluator.Toolchain(), evaluator.Flags()});
      INFO(ToString(m.outcome) << ": " << m.reason << "\n" << m.log);
      return m;
    };

    const Measurement reference = eval(task.reference.text);
    CHECK(reference.outcome == Outcome::kMeasured);
    CHECK(reference.speedup > 0.5);
    CHECK(reference.speedup < 2.0);
    CHECK(reference.shapes.size() == task.shapes.size());

    // Off by 1% everywhere: wrong.
    std::string wrong = task.reference.text;
    const std::string scale = "/ sum);";
    REQUIRE(Contains(wrong, scale));
    wrong.replace(wrong.find(scale), scale.size(), "/ sum * 1.01);");
    const Measurement bad = eval(wrong);
    CHECK(bad.outcome == Outcome::kWrong);

    // Writes into its input: wrong, naming x.
    const std::string modifying =
        "#include <cstdint>\n"
        "__global__ void k(float* x, float* y, int64_t n) {\n"
        "  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) { y[i] = 0.0f; x[i] = 1.0f; }\n"
        "}\n"
        "void softmax(const float* x, float* y, int64_t rows, int64_t cols) {\n"
        "  const int64_t n = rows * cols;\n"
        "  k<<<(unsigned)((n + 255) / 256), 256>>>(const_cast<float*>(x), y, n);\n"
        "}\n";
    const Measurement cheat = eval(modifying);
    CHECK(cheat.outcome == Outcome::kWrong);
    CHECK(Contains(cheat.reason, "modified its input x"));

    // Hidden shapes: the reference passes them; a kernel right only on the
    // shapes it was shown (the reference's, zeros elsewhere) is wrong there.
    const Candidate honest{task.reference.text, {}, evaluator.Toolchain(), evaluator.Flags()};
    const HiddenShapeCheck passed = evaluator.CheckHiddenShapes(honest, evaluator.Build(honest), 5);
    INFO(passed.note);
    CHECK(passed.shapes.size() == 2);
    CHECK_FALSE(passed.failure.has_value());
    std::string special = task.reference.text;
    const std::string entry = "void softmax(const float* x, float* y, int64_t rows, int64_t cols) {";
    REQUIRE(Contains(special, entry));
    special.replace(special.find(entry), entry.size(),
                    entry + "\n  if (!((rows == 2048 && cols == 1024) || (rows == 64 && cols == 16384) || (rows == 7 && "
                            "cols == 33))) { cudaMemset(y, 0, rows * cols * sizeof(float)); return; }");
    const Measurement special_cased = eval(special);
    CHECK(special_cased.outcome == Outcome::kWrong);
    CHECK(Contains(special_cased.reason, "hidden shape"));
  }
}

}  // namespace
}  // namespace kestrel
