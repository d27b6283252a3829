#include "evaluators/sandbox.h"

#include <seccomp.h>
#include <signal.h>
#include <sys/prctl.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "evaluators/subprocess.h"

namespace kestrel {
namespace {

constexpr double kProbeTimeoutSeconds = 10;
constexpr char kBlockedMarker[] = "kestrel-runner: sandbox: blocked system call ";

std::vector<std::string> BwrapArgs(const std::string& bwrap, const std::filesystem::path& scratch) {
  return {bwrap,         "--ro-bind",     "/",      "/", "--dev", "/dev", "--proc", "/proc", "--bind",
          scratch.string(), scratch.string(), "--unshare-net", "--die-with-parent", "--"};
}

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 160 ? line.substr(0, 160) + "..." : line;
}

void ProbeBwrap(SandboxReport& report, const std::filesystem::path& scratch) {
  auto bwrap = FindProgram("bwrap");
  if (!bwrap) {
    report.bwrap_why = "bwrap not found in $PATH";
    return;
  }
  SubprocessOptions options;
  options.argv = BwrapArgs(bwrap->string(), scratch);
  options.argv.push_back("true");
  options.timeout_s = kProbeTimeoutSeconds;
  auto ran = RunSubprocess(options);
  if (!ran) {
    report.bwrap_why = ran.error().message();
  } else if (!ran->Succeeded()) {
    report.bwrap_why = ran->log.empty() ? ran->Describe(kProbeTimeoutSeconds) : FirstLine(ran->log);
  } else {
    report.bwrap = true;
    report.bwrap_path = bwrap->string();
  }
}

void ProbeSeccomp(SandboxReport& report) {
  if (::seccomp_api_get() < 1) {
    report.seccomp_why = "libseccomp finds no seccomp support in this kernel";
  } else if (::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 && errno == EINVAL) {
    report.seccomp_why = "the kernel was built without seccomp";
  } else {
    report.seccomp = true;
  }
}

// What a refused system call was an attempt at, by its name.
std::string Attempt(const std::string& name) {
  static const std::map<std::string, std::string> kAttempts = {
      {"socket", "open a socket"},
      {"socketpair", "open a socket"},
      {"connect", "connect a socket"},
      {"bind", "bind a socket"},
      {"listen", "listen on a socket"},
      {"accept", "accept a connection"},
      {"accept4", "accept a connection"},
      {"execve", "execute a program"},
      {"execveat", "execute a program"},
      {"fork", "start a process"},
      {"vfork", "start a process"},
      {"clone", "start a process or thread"},
      {"ptrace", "trace a process"},
      {"process_vm_readv", "read another process's memory"},
      {"process_vm_writev", "write another process's memory"},
      {"kill", "signal another process"},
      {"tgkill", "signal another process"},
      {"tkill", "signal a thread directly"},
      {"open", "open a file for writing"},
      {"openat", "open a file for writing"},
      {"creat", "create a file"},
  };
  if (auto found = kAttempts.find(name); found != kAttempts.end()) return found->second;
  if (name.rfind("io_uring", 0) == 0) return "use io_uring";
  return "change the file system (" + name + ")";
}

}  // namespace

std::string SandboxReport::Summary() const {
  std::string active = bwrap ? "bwrap" : "";
  if (seccomp) active += active.empty() ? "seccomp" : "+seccomp";
  if (rlimits) active += active.empty() ? "rlimits" : "+rlimits";
  std::string line = "sandbox: " + (active.empty() ? std::string("none") : active);
  std::string missing;
  if (!bwrap) missing += "bwrap unavailable: " + bwrap_why;
  if (!seccomp) missing += (missing.empty() ? "" : "; ") + ("seccomp unavailable: " + seccomp_why);
  return missing.empty() ? line : line + " (" + missing + ")";
}

SandboxReport DetectSandbox(const std::filesystem::path& scratch) {
  static std::mutex mutex;
  static std::map<std::filesystem::path, SandboxReport> cache;
  const std::filesystem::path dir = scratch.empty() ? std::filesystem::temp_directory_path() : scratch;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto found = cache.find(dir); found != cache.end()) return found->second;
  SandboxReport report;
  ProbeBwrap(report, dir);
  ProbeSeccomp(report);
  cache.emplace(dir, report);
  return report;
}

std::vector<std::string> SandboxedArgv(const SandboxReport& report, const std::filesystem::path& scratch,
                                       const std::vector<std::string>& argv) {
  if (!report.bwrap) return argv;
  std::vector<std::string> wrapped = BwrapArgs(report.bwrap_path, scratch);
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

int SignalFromBwrapExit(int exit_code) { return exit_code > 128 && exit_code < 128 + NSIG ? exit_code - 128 : 0; }

std::string SandboxViolation(const std::string& log) {
  const auto at = log.rfind(kBlockedMarker);
  if (at == std::string::npos) return "sandbox: the kernel made a forbidden system call";
  const int number = std::atoi(log.c_str() + at + std::strlen(kBlockedMarker));
  char* name = ::seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, number);
  const std::string syscall = name != nullptr ? name : "system call " + std::to_string(number);
  std::free(name);
  return "sandbox: the kernel tried to " + Attempt(syscall);
}

}  // namespace kestrel
