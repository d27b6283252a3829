#pragma once
// The bubblewrap command line every kernel's worker runs under, up to the
// worker's own binds (runner/worker_process.h): new user (uid 65534), PID,
// IPC, network, UTS and cgroup namespaces; no capabilities; a new session;
// death with its parent; only `env`; a file system of /usr and the
// loader's links and cache (read-only), /proc and /dev of its own, and
// `scratch` as /tmp, its working directory. Shared by the supervisor and
// by DetectSandbox's probe, so the probe tries exactly what workers get.

#include <filesystem>
#include <string>
#include <vector>

namespace kestrel {

std::vector<std::string> WorkerSandboxArgs(const std::string& bwrap, const std::vector<std::string>& env,
                                           const std::filesystem::path& scratch);

}  // namespace kestrel
