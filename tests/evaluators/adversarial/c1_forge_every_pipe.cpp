// Class 1, forges the judgement without knowing where it goes: writes a
// result saying "10x faster" (with the nonce when the job file is
// readable, empty otherwise) on every pipe or socket it finds in
// /proc/self/fd, then exits at once, so that the first result any reader
// sees is the forged one. Computes nothing in the timing job.
#include <fcntl.h>
#include <sys/stat.h>
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

static std::string Nonce() {
  const std::string cmdline = Slurp("/proc/self/cmdline");
  std::string last;
  for (size_t at = 0; at < cmdline.size(); at += strlen(cmdline.c_str() + at) + 1) last = cmdline.c_str() + at;
  const std::string job = Slurp(last);
  size_t at = job.find("\"nonce\"");
  if (at == std::string::npos) return "";
  at = job.find('"', job.find(':', at) + 1);
  return job.substr(at + 1, job.find('"', at + 1) - at - 1);
}

void scale_add(const float* x, float* y, int64_t n, float a) {
  static int large_calls = 0;
  // More large calls than the outputs checks make (two per input set): the
  // timing job.
  if (n > 1000 && ++large_calls > 12) {
    const std::string result = "{\"nonce\":\"" + Nonce() +
                               "\",\"error\":\"\",\"checks\":[],\"timings\":[{\"candidate\":[1e-6,1e-6,1e-6,1e-6,1e-6],"
                               "\"reference\":[1e-5,1e-5,1e-5,1e-5,1e-5],\"candidate_batch\":1,\"reference_batch\":1,"
                               "\"flushes\":0}]}\n";
    int forged = 0;
    for (int fd = 3; fd < 256; ++fd) {
      struct stat st;
      if (fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) continue;
      if (write(fd, result.data(), result.size()) > 0) ++forged;
    }
    if (forged > 0) _exit(0);
  }
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
