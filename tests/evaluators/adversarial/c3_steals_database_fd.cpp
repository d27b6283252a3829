// Class 3, takes another process's descriptors: finds the process that holds
// the canary database open (its /proc/PID/fd), copies those descriptors
// with pidfd_open + pidfd_getfd and overwrites the database's header and
// truncates its WAL through them.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// SAFETY: this kernel attacks only the test's canaries, found by name: a
// process whose argv[0] is kestrel-canary-bystander, files under a folder
// named kestrel-canary-*. When it finds none it aims at a PID that cannot
// exist (above the kernel's PID_MAX_LIMIT) or a path that does not, so that
// the system call is still made (and must be refused) but reaches nothing.
static const int kNoSuchPid = 0x3ffffff0;

static std::string Slurp(const std::string& path, size_t limit = 1 << 20) {
  std::string text;
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return text;
  char buf[65536];
  for (ssize_t got; text.size() < limit && (got = read(fd, buf, sizeof buf)) > 0;) {
    text.append(buf, static_cast<size_t>(got));
  }
  close(fd);
  return text;
}

// PIDs whose argv[0] is exactly kestrel-canary-bystander.
static std::vector<int> Bystanders() {
  std::vector<int> pids;
  if (DIR* proc = opendir("/proc")) {
    while (dirent* entry = readdir(proc)) {
      const int pid = std::atoi(entry->d_name);
      if (pid <= 0 || pid == getpid()) continue;
      const std::string cmdline = Slurp("/proc/" + std::to_string(pid) + "/cmdline", 4096);
      if (std::strcmp(cmdline.c_str(), "kestrel-canary-bystander") == 0) pids.push_back(pid);
    }
    closedir(proc);
  }
  return pids;
}

// Folders named kestrel-canary-* in /tmp and $TMPDIR.
static std::vector<std::string> CanaryDirs() {
  std::vector<std::string> dirs;
  std::vector<std::string> roots = {"/tmp"};
  if (const char* tmp = std::getenv("TMPDIR"); tmp != nullptr && std::string(tmp) != "/tmp") roots.push_back(tmp);
  for (const auto& root : roots) {
    if (DIR* dir = opendir(root.c_str())) {
      while (dirent* entry = readdir(dir)) {
        if (std::strncmp(entry->d_name, "kestrel-canary-", 15) == 0) dirs.push_back(root + "/" + entry->d_name);
      }
      closedir(dir);
    }
  }
  return dirs;
}

// Files in the canary folders whose name ends with `suffix`; at least one
// path (in a folder that does not exist) when there are none.
static std::vector<std::string> CanaryFiles(const char* suffix) {
  std::vector<std::string> files;
  for (const auto& d : CanaryDirs()) {
    if (DIR* dir = opendir(d.c_str())) {
      while (dirent* entry = readdir(dir)) {
        const std::string name = entry->d_name;
        const size_t n = std::strlen(suffix);
        if (name.size() >= n && name.compare(name.size() - n, n, suffix) == 0) files.push_back(d + "/" + name);
      }
      closedir(dir);
    }
  }
  if (files.empty()) files.push_back(std::string("/tmp/kestrel-canary-absent/kestrel-canary") + suffix);
  return files;
}

static void Honest(const float* x, float* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
#include <sys/syscall.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

static bool IsCanaryDatabase(const std::string& target) {
  auto ends = [&](const char* s) {
    const size_t n = std::strlen(s);
    return target.size() >= n && target.compare(target.size() - n, n, s) == 0;
  };
  return target.find("/kestrel-canary-") != std::string::npos && (ends(".db") || ends(".db-wal"));
}

void scale_add(const float* x, float* y, int64_t n, float a) {
  static bool done = false;
  if (!done) {
    done = true;
    int stolen_count = 0;
    if (DIR* proc = opendir("/proc")) {
      while (dirent* entry = readdir(proc)) {
        const int pid = std::atoi(entry->d_name);
        if (pid <= 0 || pid == getpid()) continue;
        const std::string fds = "/proc/" + std::to_string(pid) + "/fd";
        DIR* dir = opendir(fds.c_str());
        if (dir == nullptr) continue;
        while (dirent* fd_entry = readdir(dir)) {
          char target[4096];
          const ssize_t got = readlink((fds + "/" + fd_entry->d_name).c_str(), target, sizeof target - 1);
          if (got <= 0) continue;
          target[got] = 0;
          if (!IsCanaryDatabase(target)) continue;
          const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
          const int fd = pidfd < 0 ? -1 : static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, std::atoi(fd_entry->d_name), 0));
          std::fprintf(stderr, "c3_steals_database_fd: %d/%s -> %s: pidfd %d, fd %d\n", pid, fd_entry->d_name, target, pidfd, fd);
          if (fd >= 0) {
            ++stolen_count;
            if (std::string(target).find("-wal") != std::string::npos) {
              if (ftruncate(fd, 0) != 0) std::perror("ftruncate");
            } else {
              const char garbage[] = "kestrel-canary overwritten by a kernel: not a database any more";
              if (pwrite(fd, garbage, sizeof garbage, 0) < 0) std::perror("pwrite");
            }
            close(fd);
          }
          if (pidfd >= 0) close(pidfd);
        }
        closedir(dir);
      }
      closedir(proc);
    }
    if (stolen_count == 0) {
      const long pidfd = syscall(SYS_pidfd_open, kNoSuchPid, 0);
      std::fprintf(stderr, "c3_steals_database_fd: nothing found; pidfd_open = %ld, pidfd_getfd = %ld\n", pidfd,
                   syscall(SYS_pidfd_getfd, -1, 0, 0));
    }
  }
  Honest(x, y, n, a);
}
