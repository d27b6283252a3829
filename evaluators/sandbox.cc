#include "evaluators/sandbox.h"

#include <seccomp.h>
#include <sys/prctl.h>

#include <cerrno>
#include <map>
#include <mutex>

#include "evaluators/sandbox_args.h"
#include "evaluators/subprocess.h"

namespace kestrel {
namespace {

constexpr double kProbeTimeoutSeconds = 10;

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 160 ? line.substr(0, 160) + "..." : line;
}

// Runs `true` under bwrap with `argv`'s flags; "" when it worked, else why not.
std::string TryBwrap(std::vector<std::string> argv) {
  argv.push_back("/usr/bin/true");
  SubprocessOptions options;
  options.argv = std::move(argv);
  options.timeout_s = kProbeTimeoutSeconds;
  auto ran = RunSubprocess(options);
  if (!ran) return ran.error().message();
  if (ran->Succeeded()) return "";
  return ran->log.empty() ? ran->Describe(kProbeTimeoutSeconds) : FirstLine(ran->log);
}

void ProbeBwrap(SandboxReport& report, const std::filesystem::path& scratch) {
  auto bwrap = FindProgram("bwrap");
  if (!bwrap) {
    report.bwrap_why = "bwrap not found in $PATH (Debian: apt-get install bubblewrap)";
    return;
  }
  const std::string why = TryBwrap(WorkerSandboxArgs(bwrap->string(), {}, scratch));
  if (why.empty()) {
    report.bwrap = true;
    report.bwrap_path = bwrap->string();
    return;
  }
  // Tell user namespaces apart from the rest: the usual reason.
  std::vector<std::string> without_user = {bwrap->string(), "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/"};
  report.bwrap_why = TryBwrap(without_user).empty()
                         ? "user namespaces are unavailable (" + why +
                               "; sysctl kernel.unprivileged_userns_clone=1 or user.max_user_namespaces > 0)"
                         : why;
}

void ProbeSeccomp(SandboxReport& report) {
  const int api = ::seccomp_api_get();
  if (api < 1) {
    report.seccomp_why = "libseccomp finds no seccomp support in this kernel";
  } else if (::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 && errno == EINVAL) {
    report.seccomp_why = "the kernel was built without seccomp";
  } else {
    report.seccomp = true;
    report.seccomp_notify = api >= 6;
  }
}

}  // namespace

std::string SandboxReport::Summary() const {
  if (unconfined) {
    return "sandbox: NONE (evaluator.sandbox is \"none\": kernels run unconfined, with rlimits only)";
  }
  std::string active = bwrap ? "bwrap" : "";
  if (seccomp) active += active.empty() ? "seccomp" : "+seccomp";
  if (rlimits) active += active.empty() ? "rlimits" : "+rlimits";
  std::string line = "sandbox: " + (active.empty() ? std::string("none") : active);
  std::string missing;
  if (!bwrap) missing += "bwrap unavailable: " + bwrap_why;
  if (!seccomp) missing += (missing.empty() ? "" : "; ") + ("seccomp unavailable: " + seccomp_why);
  return missing.empty() ? line : line + " (INCOMPLETE: " + missing + ")";
}

std::vector<std::pair<std::string, std::string>> SandboxReport::Layers() const {
  const std::string off = unconfined ? "OFF (evaluator.sandbox \"none\")" : "";
  const std::string no_bwrap = off.empty() ? "MISSING: " + bwrap_why : off;
  const std::string no_seccomp = off.empty() ? "MISSING: " + seccomp_why : off;
  std::vector<std::pair<std::string, std::string>> layers;
  layers.emplace_back("process", "a supervisor that never loads a kernel; one worker process per kernel");
  layers.emplace_back("namespaces", bwrap && !unconfined ? "user (uid 65534), pid, ipc, network, uts, cgroup" : no_bwrap);
  layers.emplace_back("capabilities", bwrap && !unconfined ? "none (all dropped), new session" : no_bwrap);
  layers.emplace_back("file system", bwrap && !unconfined
                                         ? "/usr, the worker and the kernel read-only; a fresh scratch folder as /tmp"
                                         : no_bwrap);
  layers.emplace_back("environment", bwrap && !unconfined ? "cleared: thread counts only" : no_bwrap);
  layers.emplace_back("seccomp", seccomp && !unconfined
                                     ? std::string("allowlist, kill-process") +
                                           (seccomp_notify ? ", forbidden calls named by user notification" : "")
                                     : no_seccomp);
  layers.emplace_back("limits", "wall clock, CPU time, address space, file size, no core files");
  return layers;
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

SandboxReport SandboxFor(const std::string& mode, const std::filesystem::path& scratch) {
  if (mode != "none") return DetectSandbox(scratch);
  SandboxReport report;
  report.unconfined = true;
  return report;
}

}  // namespace kestrel
