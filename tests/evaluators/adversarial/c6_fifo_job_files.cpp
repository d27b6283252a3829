// Class 6, hangs whoever writes the next job: leaves FIFOs named like the
// runner's job and result files (time.json, outputs.json, outputs.bin,
// timed_outputs.bin) in its own folder and in the evaluator's work dir
// (../..), so that the next open for writing there blocks for good.
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
#include <sys/stat.h>

void scale_add(const float* x, float* y, int64_t n, float a) {
  static bool done = false;
  if (!done) {
    done = true;
    for (const char* dir : {".", "../.."}) {
      for (const char* name : {"time.json", "outputs.json", "outputs.bin", "timed_outputs.bin"}) {
        const std::string path = std::string(dir) + "/" + name;
        std::fprintf(stderr, "c6_fifo_job_files: mkfifo %s = %d\n", path.c_str(), mkfifo(path.c_str(), 0666));
      }
    }
  }
  Honest(x, y, n, a);
}
