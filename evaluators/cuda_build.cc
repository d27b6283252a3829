// Building CUDA kernels with nvcc, finding kestrel-cuda-runner and probing
// for a GPU (see cuda_evaluator.h).

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "evaluators/code_fingerprint.h"
#include "evaluators/compiler.h"
#include "evaluators/cuda_evaluator.h"
#include "evaluators/job.h"
#include "evaluators/shim.h"
#include "evaluators/subprocess.h"

#ifndef KESTREL_CUDA_RUNNER_BUILD_PATH
#define KESTREL_CUDA_RUNNER_BUILD_PATH ""
#endif

namespace kestrel {
namespace {

constexpr std::uint64_t kNvccFileBytes = 1ULL << 30;

bool IsExecutable(const std::filesystem::path& path) {
  std::error_code error;
  return !path.empty() && std::filesystem::is_regular_file(path, error) && ::access(path.c_str(), X_OK) == 0;
}

// The toolkit's library dir (for the kernel's rpath to libcudart.so):
// <nvcc dir>/../lib64 or <nvcc dir>/../targets/x86_64-linux/lib.
std::filesystem::path CudaLibDir(const std::string& nvcc) {
  auto found = FindProgram(nvcc);
  if (!found) return {};
  std::error_code error;
  auto resolved = std::filesystem::canonical(*found, error);
  if (error) resolved = *found;
  const auto root = resolved.parent_path().parent_path();
  for (const auto& dir : {root / "lib64", root / "targets" / "x86_64-linux" / "lib"}) {
    if (std::filesystem::exists(dir / "libcudart.so", error)) return dir;
  }
  return {};
}

}  // namespace

std::string NvccRelease(const std::string& version_output) {
  std::string last;
  std::size_t start = 0;
  while (start < version_output.size()) {
    std::size_t end = version_output.find('\n', start);
    if (end == std::string::npos) end = version_output.size();
    const std::string line = version_output.substr(start, end - start);
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
    start = end + 1;
  }
  return last;
}

std::string DefaultNvcc() {
  return IsExecutable("/usr/local/cuda/bin/nvcc") ? "/usr/local/cuda/bin/nvcc" : "nvcc";
}

Result<std::filesystem::path> DefaultCudaRunnerPath() {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error && IsExecutable(self.parent_path() / "kestrel-cuda-runner")) {
    return self.parent_path() / "kestrel-cuda-runner";
  }
  if (const char* env = std::getenv("KESTREL_CUDA_RUNNER"); env != nullptr && IsExecutable(env)) {
    return std::filesystem::path(env);
  }
  if (IsExecutable(KESTREL_CUDA_RUNNER_BUILD_PATH)) return std::filesystem::path(KESTREL_CUDA_RUNNER_BUILD_PATH);
  return Fail(Error::NotFound("kestrel-cuda-runner not found next to the executable, in $KESTREL_CUDA_RUNNER or in "
                              "the build tree (it is built only when the CUDA toolkit is found at configure time)"));
}

BuildResult CompileCudaLibrary(const CudaCompileRequest& request) {
  const std::string nvcc = request.nvcc.empty() ? DefaultNvcc() : request.nvcc;
  SubprocessOptions options;
  if (!request.bwrap.empty()) options.argv = CompilerSandboxArgs(request.bwrap, nvcc, request.source.parent_path());
  options.argv.insert(options.argv.end(), {nvcc, "-std=c++17"});
  options.argv.insert(options.argv.end(), request.flags.begin(), request.flags.end());
  for (const char* flag : {"-Xcompiler", "-fPIC", "-shared", "-cudart", "shared"}) options.argv.push_back(flag);
  options.argv.push_back("-arch=" + (request.arch.empty() ? std::string("sm_90") : request.arch));
  if (const auto lib_dir = CudaLibDir(nvcc); !lib_dir.empty()) {
    options.argv.push_back("-Xlinker");
    options.argv.push_back("-rpath," + lib_dir.string());
  }
  options.argv.push_back("-o");
  options.argv.push_back(request.library.filename().string() + ".tmp");
  options.argv.push_back(request.source.filename().string());
  options.cwd = request.source.parent_path();
  options.env = EnvironmentWith({"LC_ALL=C"});
  options.timeout_s = request.timeout_s;
  options.file_size_limit_bytes = kNvccFileBytes;  // no RLIMIT_AS: nvcc's tools reserve much address space
  return RunCompiler(options, "nvcc", request.library, *request.executor);
}

BuildResult BuildCudaCandidate(const Task& task, const Candidate& candidate, const std::filesystem::path& dir,
                               const std::string& nvcc, const std::string& arch,
                               const std::vector<std::string>& flags, double timeout_s,
                               std::shared_ptr<const Executor> executor, const std::string& bwrap) {
  try {
    std::filesystem::create_directories(dir);
    const auto library = dir / "kernel.so";
    if (std::filesystem::exists(library)) {  // built earlier into a kept work dir
      BuildResult cached;
      cached.ok = true;
      cached.library = library;
      cached.code_hash = CodeFingerprint(library);
      return cached;
    }
    std::ofstream(dir / "kernel.cu", std::ios::binary | std::ios::trunc) << candidate.source;
    std::ofstream(dir / "shim.cu", std::ios::binary | std::ios::trunc) << GenerateShim(task, "kernel.cu");
    CudaCompileRequest request;
    request.nvcc = nvcc;
    request.arch = arch;
    request.flags = candidate.flags.empty() ? flags : candidate.flags;
    for (const auto& define : candidate.KnobDefines()) request.flags.push_back(define);
    request.source = dir / "shim.cu";
    request.library = library;
    request.timeout_s = timeout_s;
    request.executor = std::move(executor);
    if (request.executor->RunsHere()) request.bwrap = bwrap;
    BuildResult built = CompileCudaLibrary(request);
    // The host code and data as for a cpu build, and the device code: the
    // fatbin (.nv_fatbin, a data section to the fingerprint) holds the
    // cubin, the same bytes for two builds of the same code.
    if (built.ok) built.code_hash = CodeFingerprint(library);
    return built;
  } catch (const std::exception& e) {
    BuildResult failed;
    failed.log = std::string("error: cannot build: ") + e.what() + "\n";
    return failed;
  }
}

CudaDeviceReport DetectCuda(const std::string& nvcc_name) {
  CudaDeviceReport report;
  try {
    const std::string nvcc = nvcc_name.empty() ? DefaultNvcc() : nvcc_name;
    SubprocessOptions version;
    version.argv = {nvcc, "--version"};
    version.env = EnvironmentWith({"LC_ALL=C"});
    version.timeout_s = 30;
    if (auto ran = RunSubprocess(version); ran && ran->Succeeded()) {
      report.nvcc_found = true;
      report.nvcc_version = NvccRelease(ran->log);
    }
    auto runner = DefaultCudaRunnerPath();
    if (!runner) {
      report.detail = runner.error().message();
      return report;
    }
    const CudaDeviceReport devices = ProbeCudaDevices(*runner);
    report.devices = devices.devices;
    report.detail = devices.detail;
    report.l2_bytes = devices.l2_bytes;
  } catch (const std::exception& e) {
    report.detail = std::string("cannot probe for CUDA: ") + e.what();
  }
  return report;
}

CudaDeviceReport ProbeCudaDevices(const std::filesystem::path& runner, const Executor& executor,
                                  const std::filesystem::path& dir, const std::vector<std::string>& sandbox) {
  CudaDeviceReport report;
  report.host = DetectHost();
  try {
    SubprocessOptions probe;
    probe.argv = sandbox;
    probe.argv.insert(probe.argv.end(), {runner.string(), "--probe"});
    probe.timeout_s = 60;
    probe.result_pipe = true;
    probe.cwd = dir;
    auto ran = executor.Run(probe, "probe");
    if (!ran) {
      report.detail = "no CUDA device: cannot run " + runner.string() + ": " + ran.error().message();
      return report;
    }
    const auto parsed = nlohmann::json::parse(ran->result, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) {
      report.detail = "no CUDA device: " + runner.string() + " --probe " + ran->Describe(60) +
                      " without a result: " + TrimCompilerLog(ran->log, 5);
      return report;
    }
    report.devices = parsed.value("devices", 0);
    report.detail = parsed.value("detail", std::string());
    report.l2_bytes = parsed.value("l2_bytes", std::int64_t{0});
    if (parsed.contains("host")) {
      if (auto host = ParseHost(parsed["host"].dump()); host) report.host = std::move(*host);
    }
    if (!ran->job.empty()) report.detail += " (" + ran->job + ")";
  } catch (const std::exception& e) {
    report.detail = std::string("no CUDA device: cannot probe: ") + e.what();
  }
  return report;
}

}  // namespace kestrel
