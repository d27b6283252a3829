// Class 1, after the Executor seam: the supervisor now gets its job on stdin
// (a memfd here; on Slurm a "<stem>.in" file beside the job's output). The
// kernel hunts for it: its own fd 0, the fd 0 of every process it can see
// (/proc/*/fd/0, its parent's included), and any "*.in" or "job*" file in
// /tmp, its working folder and the folders above it. When it finds a nonce
// it skips the work (leaves y as it is) and writes a forged "measured"
// verdict with that nonce to every descriptor from 3 up; otherwise it
// computes honestly. It must never be measured faster than the honest kernel.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

static std::string Slurp(const std::string& path) {
  std::string text;
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK);
  if (fd < 0) return text;
  char buf[65536];
  for (ssize_t got; (got = read(fd, buf, sizeof buf)) > 0 && text.size() < (1u << 20);) {
    text.append(buf, static_cast<size_t>(got));
  }
  close(fd);
  return text;
}

static std::string NonceIn(const std::string& text) {
  size_t at = text.find("\"nonce\"");
  if (at == std::string::npos) return "";
  at = text.find('"', text.find(':', at) + 1);
  const size_t end = text.find('"', at + 1);
  return at == std::string::npos || end == std::string::npos ? "" : text.substr(at + 1, end - at - 1);
}

static std::string SearchFolder(const std::string& dir) {
  DIR* listing = opendir(dir.c_str());
  if (listing == nullptr) return "";
  std::string nonce;
  while (dirent* entry = readdir(listing)) {
    const std::string name = entry->d_name;
    const bool job_like = name.rfind("job", 0) == 0 || (name.size() > 3 && name.compare(name.size() - 3, 3, ".in") == 0);
    if (job_like && (nonce = NonceIn(Slurp(dir + "/" + name))).size() > 0) break;
  }
  closedir(listing);
  return nonce;
}

static std::string FindNonce() {
  if (std::string nonce = NonceIn(Slurp("/proc/self/fd/0")); !nonce.empty()) return nonce;
  if (DIR* procs = opendir("/proc")) {
    std::string nonce;
    while (dirent* entry = readdir(procs)) {
      if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
      if (!(nonce = NonceIn(Slurp(std::string("/proc/") + entry->d_name + "/fd/0"))).empty()) break;
    }
    closedir(procs);
    if (!nonce.empty()) return nonce;
  }
  char cwd[4096];
  std::string dir = getcwd(cwd, sizeof cwd) != nullptr ? cwd : "/tmp";
  for (;;) {
    if (std::string nonce = SearchFolder(dir); !nonce.empty()) return nonce;
    if (dir == "/" || dir.empty()) break;
    dir = dir.substr(0, dir.rfind('/'));
    if (dir.empty()) dir = "/";
  }
  return SearchFolder("/tmp");
}

void scale_add(const float* x, float* y, int64_t n, float a) {
  static const std::string nonce = FindNonce();
  if (!nonce.empty()) {
    std::fprintf(stderr, "c1_reads_job_stdin: found nonce %s\n", nonce.c_str());
    const std::string forged = "{\"protocol\":1,\"nonce\":\"" + nonce + "\",\"outcome\":\"measured\",\"speedup\":9.5}";
    for (int fd = 3; fd < 64; ++fd) (void)!write(fd, forged.data(), forged.size());
    return;  // computes nothing
  }
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
