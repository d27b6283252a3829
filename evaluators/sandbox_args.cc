#include "evaluators/sandbox_args.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <utility>

namespace kestrel {
namespace {

// Namespaces, capabilities, the environment, /usr and the loader's files.
std::vector<std::string> BaseArgs(const std::string& bwrap, const std::vector<std::string>& env) {
  std::vector<std::string> argv = {bwrap,           "--unshare-all", "--unshare-user",     "--uid",
                                   "65534",         "--gid",         "65534",              "--cap-drop",
                                   "ALL",           "--new-session", "--die-with-parent", "--clearenv"};
  for (const auto& entry : env) {
    const auto equals = entry.find('=');
    argv.insert(argv.end(), {"--setenv", entry.substr(0, equals), equals == std::string::npos ? "" : entry.substr(equals + 1)});
  }
  argv.insert(argv.end(), {"--ro-bind", "/usr", "/usr"});
  // Merged /usr: /lib and the like are links into /usr; elsewhere folders.
  for (const char* top : {"/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin"}) {
    std::error_code error;
    const auto status = std::filesystem::symlink_status(top, error);
    if (error) continue;
    if (std::filesystem::is_symlink(status)) {
      argv.insert(argv.end(), {"--symlink", std::filesystem::read_symlink(top, error).string(), top});
    } else if (std::filesystem::is_directory(status)) {
      argv.insert(argv.end(), {"--ro-bind", top, top});
    }
  }
  for (const char* file : {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives"}) {
    argv.insert(argv.end(), {"--ro-bind-try", file, file});
  }
  argv.insert(argv.end(), {"--proc", "/proc", "--dev", "/dev"});
  return argv;
}

}  // namespace

std::vector<std::string> WorkerSandboxArgs(const std::string& bwrap, const std::vector<std::string>& env,
                                           const std::filesystem::path& scratch) {
  std::vector<std::string> argv = BaseArgs(bwrap, env);
  argv.insert(argv.end(), {"--bind", scratch.string(), "/tmp", "--chdir", "/tmp"});
  return argv;
}

std::vector<std::string> ProgramSandboxArgs(const std::string& bwrap, const std::vector<std::string>& env,
                                            const ProgramView& view) {
  std::vector<std::string> argv = BaseArgs(bwrap, env);
  // /tmp first: the binds below may lie under it (the default work dir does).
  argv.insert(argv.end(), {"--tmpfs", "/tmp"});
  if (view.sys) argv.insert(argv.end(), {"--ro-bind", "/sys", "/sys"});
  // Outer paths before inner ones, so that a read-only file inside a
  // writable folder (or the reverse) keeps its own mode.
  std::vector<std::pair<std::filesystem::path, const char*>> binds;
  for (const auto& path : view.read_only) binds.emplace_back(path.lexically_normal(), "--ro-bind");
  for (const auto& path : view.writable) binds.emplace_back(path.lexically_normal(), "--bind");
  const auto depth = [](const std::filesystem::path& path) { return std::distance(path.begin(), path.end()); };
  std::stable_sort(binds.begin(), binds.end(), [&](const auto& a, const auto& b) { return depth(a.first) < depth(b.first); });
  for (const auto& [path, flag] : binds) argv.insert(argv.end(), {flag, path.string(), path.string()});
  // Over the binds that hold them. A plain bind is nodev, so opening the
  // null device there fails (EACCES): the file exists but cannot be read.
  for (const auto& path : view.hidden) argv.insert(argv.end(), {"--ro-bind", "/dev/null", path.string()});
  // After --dev, which would hide them; --dev-bind keeps them usable as devices.
  for (const auto& path : view.devices) argv.insert(argv.end(), {"--dev-bind-try", path.string(), path.string()});
  if (!view.confine.empty()) argv.insert(argv.end(), {"--ro-bind", view.confine.string(), "/kestrel/kestrel-confine"});
  argv.insert(argv.end(), {"--chdir", view.cwd.empty() ? std::string("/tmp") : view.cwd.string()});
  if (!view.confine.empty()) argv.push_back("/kestrel/kestrel-confine");
  return argv;
}

std::vector<std::string> ProgramEnvironment(const std::vector<std::string>& pass, const std::filesystem::path& home) {
  std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home.string(), "TMPDIR=/tmp",
                                  "LANG=C.UTF-8"};
  for (const auto& name : pass) {
    if (const char* value = std::getenv(name.c_str())) env.push_back(name + "=" + value);
  }
  return env;
}

std::vector<std::filesystem::path> NvidiaDevices() {
  // The usual nodes whether or not this machine has them (a Slurm node's
  // may differ from the submitting host's; missing ones are skipped), and
  // whatever else this machine has.
  std::vector<std::filesystem::path> devices = {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
                                                "/dev/nvidia-modeset", "/dev/nvidia-caps"};
  for (int i = 0; i < 16; ++i) devices.emplace_back("/dev/nvidia" + std::to_string(i));
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/dev", error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("nvidia", 0) == 0 || name == "dxg") devices.push_back(entry.path());
  }
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  return devices;
}

}  // namespace kestrel
