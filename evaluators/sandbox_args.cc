#include "evaluators/sandbox_args.h"

namespace kestrel {

std::vector<std::string> WorkerSandboxArgs(const std::string& bwrap, const std::vector<std::string>& env,
                                           const std::filesystem::path& scratch) {
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
  argv.insert(argv.end(), {"--proc", "/proc", "--dev", "/dev", "--bind", scratch.string(), "/tmp", "--chdir", "/tmp"});
  return argv;
}

}  // namespace kestrel
