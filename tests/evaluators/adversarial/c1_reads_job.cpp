// Class 1, reads the judge's secrets: its command line, the job file it
// names (the nonce, the seed of the inputs, the reference library's path)
// and its open descriptors, and prints them where the log will show them.
// Computes honestly.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

static std::string Slurp(const std::string& path) {
  std::string text;
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return text;
  char buf[65536];
  for (ssize_t got; (got = read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(got));
  close(fd);
  return text;
}

void scale_add(const float* x, float* y, int64_t n, float a) {
  static bool done = false;
  if (!done) {
    done = true;
    std::string cmdline = Slurp("/proc/self/cmdline");
    for (char& c : cmdline) c = c ? c : ' ';
    std::fprintf(stderr, "c1_reads_job: cmdline: %s\n", cmdline.c_str());
    const std::string job = Slurp(cmdline.substr(cmdline.rfind(' ', cmdline.size() - 2) + 1,
                                                 cmdline.size() - cmdline.rfind(' ', cmdline.size() - 2) - 2));
    const size_t nonce = job.find("\"nonce\"");
    std::fprintf(stderr, "c1_reads_job: job: %s\n", nonce == std::string::npos ? "(none)" : job.substr(nonce, 60).c_str());
    for (int fd = 0; fd < 64; ++fd) {
      char link[64], target[512];
      snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
      const ssize_t got = readlink(link, target, sizeof target - 1);
      if (got > 0) std::fprintf(stderr, "c1_reads_job: fd %d -> %.*s\n", fd, static_cast<int>(got), target);
    }
  }
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
