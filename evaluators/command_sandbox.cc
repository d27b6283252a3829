#include "evaluators/command_sandbox.h"

#include <glob.h>

#include <algorithm>

#include "evaluators/cpu_evaluator.h"
#include "evaluators/sandbox.h"
#include "evaluators/sandbox_args.h"
#include "evaluators/subprocess.h"

namespace kestrel {
namespace {

bool Under(const std::filesystem::path& path, const std::filesystem::path& folder) {
  const auto [end, rest] = std::mismatch(folder.begin(), folder.end(), path.begin(), path.end());
  return end == folder.end();
}

// The device nodes a pattern names now (a GPU's nodes can come and go).
std::vector<std::filesystem::path> Glob(const std::string& pattern) {
  std::vector<std::filesystem::path> paths;
  glob_t found{};
  if (::glob(pattern.c_str(), 0, nullptr, &found) == 0) {
    for (std::size_t i = 0; i < found.gl_pathc; ++i) paths.emplace_back(found.gl_pathv[i]);
  }
  ::globfree(&found);
  return paths;
}

}  // namespace

Result<CommandSandbox> CommandSandbox::Make(const CommandSandboxConfig& config, const std::filesystem::path& scratch) {
  CommandSandbox sandbox;
  if (config.mode != "auto" && config.mode != "none") {
    return Fail(Error::InvalidArgument("evaluator.sandbox: expected \"auto\" or \"none\", got \"" + config.mode + "\""));
  }
  for (std::size_t i = 0; i < config.binds.size(); ++i) {
    const std::filesystem::path path = config.binds[i];
    std::error_code error;
    if (!path.is_absolute() || !std::filesystem::exists(path, error)) {
      return Fail(Error::InvalidArgument("evaluator.binds[" + std::to_string(i) + "]: \"" + config.binds[i] +
                                         "\" is not an absolute path that exists"));
    }
    sandbox.binds_.push_back(path.lexically_normal());
  }
  for (std::size_t i = 0; i < config.devices.size(); ++i) {
    if (config.devices[i].rfind("/dev/", 0) != 0 || config.devices[i].find("..") != std::string::npos) {
      return Fail(Error::InvalidArgument("evaluator.devices[" + std::to_string(i) + "]: \"" + config.devices[i] +
                                         "\" is not a device path under /dev (globs allowed: \"/dev/nvidia*\")"));
    }
  }
  sandbox.device_patterns_ = config.devices;
  sandbox.pass_env_ = config.pass_env;
  if (config.mode == "none") {
    sandbox.unconfined_ = true;
    return sandbox;
  }
  const SandboxReport report = DetectSandbox(scratch);
  auto confine = DefaultConfinePath();
  if (!report.bwrap) {
    sandbox.gap_ = "the run command would run without bubblewrap: " + report.bwrap_why;
  } else if (!confine) {
    sandbox.gap_ = "the run command would run without its seccomp filter: " + confine.error().message();
  } else {
    sandbox.bwrap_ = report.bwrap_path;
    sandbox.confine_ = *confine;
  }
  return sandbox;
}

std::vector<std::string> CommandSandbox::Wrap(std::vector<std::string> argv, const std::filesystem::path& task_dir,
                                              const std::filesystem::path& build_dir,
                                              const std::filesystem::path& workdir,
                                              const std::vector<std::filesystem::path>& hidden) const {
  if (bwrap_.empty()) return argv;
  ProgramView view;
  view.read_only = {std::filesystem::absolute(task_dir), std::filesystem::absolute(build_dir)};
  view.writable = {std::filesystem::absolute(workdir)};
  for (const auto& path : hidden) view.hidden.push_back(std::filesystem::absolute(path).lexically_normal());
  return WrapIn(std::move(argv), std::move(view));
}

std::vector<std::string> CommandSandbox::WrapBuild(std::vector<std::string> argv,
                                                   const std::filesystem::path& task_dir,
                                                   const std::filesystem::path& build_dir) const {
  if (bwrap_.empty()) return argv;
  ProgramView view;
  view.read_only = {std::filesystem::absolute(task_dir)};
  view.writable = {std::filesystem::absolute(build_dir)};
  return WrapIn(std::move(argv), std::move(view));
}

std::vector<std::string> CommandSandbox::WrapIn(std::vector<std::string> argv, ProgramView view) const {
  view.read_only.insert(view.read_only.end(), binds_.begin(), binds_.end());
  // Files the command names by absolute path (its program, a harness script
  // kept elsewhere) are what it needs: visible, read-only.
  for (const auto& arg : argv) {
    const std::filesystem::path path(arg);
    std::error_code error;
    if (!path.is_absolute() || Under(path, "/usr") || !std::filesystem::is_regular_file(path, error)) continue;
    const bool seen = std::any_of(view.read_only.begin(), view.read_only.end(),
                                  [&](const std::filesystem::path& bound) { return Under(path, bound); }) ||
                      std::any_of(view.writable.begin(), view.writable.end(),
                                  [&](const std::filesystem::path& bound) { return Under(path, bound); });
    if (!seen) view.read_only.push_back(path.lexically_normal());
  }
  for (const auto& pattern : device_patterns_) {
    for (auto& device : Glob(pattern)) view.devices.push_back(std::move(device));
  }
  view.cwd = view.writable[0];
  view.confine = confine_;
  std::vector<std::string> wrapped = ProgramSandboxArgs(bwrap_, ProgramEnvironment(pass_env_, view.cwd), view);
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

void CommandSandbox::Unwrap(SubprocessResult& ended) const {
  if (!bwrap_.empty()) ended.ReadAsBubblewrapped();
}

std::string CommandSandbox::Summary() const {
  if (unconfined_) return "sandbox: NONE (evaluator.sandbox is \"none\": the run command runs unconfined)";
  if (bwrap_.empty()) return "sandbox: none (INCOMPLETE: " + gap_ + ")";
  return "sandbox: bwrap (user, pid, ipc, network namespaces; no capabilities; the task, the build and the work dir"
         " only; the build command too) + seccomp denylist (namespaces, mounts, ptrace, keyrings, bpf, io_uring, ...)";
}

}  // namespace kestrel
