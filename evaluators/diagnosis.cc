#include "evaluators/diagnosis.h"

#include "core/enum_names.h"
#include "evaluators/command_evaluator.h"
#include "evaluators/compiler.h"
#include "evaluators/cpu_evaluator.h"
#include "evaluators/profile_sources.h"
#if KESTREL_WITH_CUDA
#include "evaluators/cuda_evaluator.h"
#endif
#include "evaluators/sandbox.h"
#include "evaluators/subprocess.h"

namespace kestrel {
namespace {

constexpr EnumNames<CheckState, 3> kStateNames{
    {{CheckState::kOk, "ok"}, {CheckState::kWarn, "warn"}, {CheckState::kFail, "fail"}}};

Check CheckCompiler(const std::string& compiler) {
  auto version = CompilerVersion(compiler);
  if (!version) {
    return {"compiler", CheckState::kFail, version.error().message(), "apt-get install g++ (or set evaluator.compiler)"};
  }
  return {"compiler", CheckState::kOk, compiler + ": " + *version, ""};
}

Check CheckRunner() {
  auto runner = DefaultRunnerPath();
  if (!runner) return {"runner", CheckState::kFail, runner.error().message(), "build it: scripts/setup"};
  auto worker = DefaultWorkerPath();
  if (!worker) return {"runner", CheckState::kFail, worker.error().message(), "build it: scripts/setup"};
  return {"runner", CheckState::kOk, runner->string() + " (supervisor), " + worker->string() + " (one per kernel)", ""};
}

// One line per layer of the sandbox a kernel runs in (sandbox.h); a missing
// layer fails: LLM-written kernels are refused without it.
void CheckSandbox(std::vector<Check>& checks) {
  const SandboxReport report = DetectSandbox();
  for (const auto& [layer, state] : report.Layers()) {
    const bool missing = state.rfind("MISSING", 0) == 0;
    std::string fix;
    if (missing && layer == "seccomp") fix = "a kernel with seccomp filters, and libseccomp";
    if (missing && layer != "seccomp") fix = "apt-get install bubblewrap, and allow user namespaces";
    checks.push_back({"sandbox: " + layer, missing ? CheckState::kFail : CheckState::kOk, state, fix});
  }
}

// The sandbox of a program that loads kernels itself (kinds "command" and
// "cuda": command_sandbox.h, sandbox_args.h): bubblewrap or nothing.
Check CheckProgramSandbox(const EvaluatorConfig& config) {
  const std::string name = config.kind == "cuda" ? "sandbox: cuda runner" : "sandbox: run command";
  if (config.sandbox == "none") {
    return {name, CheckState::kWarn, "OFF (evaluator.sandbox \"none\"): it runs unconfined", ""};
  }
  const SandboxReport report = DetectSandbox();
  if (!report.bwrap) {
    return {name, CheckState::kFail, "MISSING: " + report.bwrap_why,
            "apt-get install bubblewrap, and allow user namespaces"};
  }
  const std::string view = config.kind == "cuda" ? "the runner, the kernels, the evaluation's folder, /sys and the GPU's nodes"
                                                 : "the task, the build and the work dir";
  return {name, CheckState::kOk,
          "bwrap: user, pid, ipc, network namespaces; no capabilities; " + view +
              " (and evaluator.binds) read-only or its own; a seccomp denylist, not an allowlist (" +
              (config.kind == "cuda" ? "the driver's calls" : "an arbitrary harness") + ")",
          ""};
}

// nvcc and a GPU, for the cuda evaluator (docs/CUDA.md). No GPU is a
// warning: cpu and command evaluations do not need one.
Check CheckCuda() {
#if KESTREL_WITH_CUDA
  const CudaDeviceReport report = DetectCuda();
  if (!report.nvcc_found) {
    return {"cuda", CheckState::kWarn, "nvcc not found: cuda tasks cannot build", "install the CUDA toolkit"};
  }
  if (report.devices == 0) {
    return {"cuda", CheckState::kWarn, "nvcc " + report.nvcc_version + "; no GPU found (" + report.detail + ")",
            "cuda tasks need an NVIDIA GPU and its driver"};
  }
  return {"cuda", CheckState::kOk,
          "nvcc " + report.nvcc_version + "; " + std::to_string(report.devices) + " GPU(s): " + report.detail, ""};
#else
  return {"cuda", CheckState::kWarn, "this build has no CUDA evaluator (no toolkit in /usr/local/cuda when configured)",
          "install the CUDA toolkit and run scripts/setup again"};
#endif
}

// The command evaluator's commands (kind "command"): placeholders, and the
// programs that do not depend on a placeholder.
Check CheckCommandEvaluator(const EvaluatorConfig& config) {
  CommandEvaluatorOptions options;
  options.build = config.build;
  options.run = config.run;
  if (auto valid = ValidateCommands(options); !valid) {
    return {"evaluator", CheckState::kFail, valid.error().message(), "fix the run config"};
  }
  for (const auto* argv : {&config.build, &config.run}) {
    if (argv->empty() || argv->front().find('{') != std::string::npos) continue;
    if (auto found = FindProgram(argv->front()); !found) {
      return {"evaluator", CheckState::kFail, found.error().message(), "install it or fix the run config"};
    }
  }
  return {"evaluator", CheckState::kOk,
          "command: run " + config.run.front() + " (the reference is measured through it when a run starts)", ""};
}

}  // namespace

std::string_view ToString(CheckState state) { return NameOf(kStateNames, state); }

std::optional<CheckState> ParseCheckState(std::string_view text) { return ValueOf(kStateNames, text); }

std::vector<Check> Diagnose(const EvaluatorConfig& config) {
  std::vector<Check> checks = {CheckCompiler(config.compiler), CheckRunner()};
  CheckSandbox(checks);
  checks.push_back(CheckCuda());
  if (config.kind == "command") checks.push_back(CheckCommandEvaluator(config));
  if (config.kind != "cpu") checks.push_back(CheckProgramSandbox(config));
  return checks;
}

std::vector<Check> DiagnoseProfileSources(const EvaluatorConfig& config) {
  std::vector<Check> checks;
  try {
    for (const ProfileSource& source : DetectProfileSources(config.kind == "cuda" ? "c++" : config.compiler)) {
      std::string fix;
      if (!source.works) {
        const std::string stands_in = config.profile_counters == "pmu"
                                          ? "; with evaluator.profile_counters \"pmu\" profiles have no "
                                            "counts here (\"auto\" falls back to cachegrind)"
                                          : "; cachegrind stands in";
        fix = source.name == "pmu"          ? "bare metal or a VM with a virtual PMU, or a lower "
                                              "kernel.perf_event_paranoid" + stands_in
              : source.name == "cachegrind" ? "apt-get install valgrind"
              : source.name == "objdump"    ? "apt-get install binutils"
              : source.name == "ncu"        ? "for CUDA kernels: install Nsight Compute on a machine with a GPU"
                                            : "set evaluator.compiler to a working compiler";
      }
      checks.push_back({"profile: " + source.name, source.works ? CheckState::kOk : CheckState::kWarn, source.detail,
                        fix});
    }
  } catch (const std::exception& e) {
    checks.push_back({"profile", CheckState::kWarn, std::string("cannot detect the profile sources: ") + e.what(), ""});
  }
  return checks;
}

}  // namespace kestrel
