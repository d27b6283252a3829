// Class 1, forges the judgement: in the timing job it reads the nonce and
// the reference's library path from the job file named on its command line,
// copies the reference's timed outputs (reference/timed_outputs.bin in the
// work dir) into its own timed-outputs file (found through /proc/self/fd),
// writes a result on fd 3 that says it is 10x faster (under any plausibility cap), and exits before the
// runner can speak. It computes nothing while timed.
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

// The string value after "key": in a JSON text, from position `from`.
static std::string StringAfter(const std::string& text, const std::string& key, size_t from = 0) {
  size_t at = text.find("\"" + key + "\"", from);
  if (at == std::string::npos) return "";
  at = text.find('"', text.find(':', at) + 1);
  const size_t end = text.find('"', at + 1);
  return at == std::string::npos || end == std::string::npos ? "" : text.substr(at + 1, end - at - 1);
}

static std::string JobFile() {
  const std::string cmdline = Slurp("/proc/self/cmdline");
  std::string last;
  for (size_t at = 0; at < cmdline.size(); at += strlen(cmdline.c_str() + at) + 1) last = cmdline.c_str() + at;
  return last;
}

static int FdEndingWith(const char* suffix) {
  for (int fd = 3; fd < 256; ++fd) {
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t got = readlink(link, target, sizeof target - 1);
    if (got <= 0) continue;
    target[got] = 0;
    const size_t n = strlen(suffix);
    if (static_cast<size_t>(got) >= n && strcmp(target + got - n, suffix) == 0) return fd;
  }
  return -1;
}

static void Forge() {
  const std::string job = Slurp(JobFile());
  if (StringAfter(job, "mode") != "time") return;
  const std::string nonce = StringAfter(job, "nonce");
  const size_t libraries = job.find("\"libraries\"");
  if (nonce.empty() || libraries == std::string::npos) return;
  size_t q = job.find('"', job.find('[', libraries));
  q = job.find('"', job.find('"', q + 1) + 1);  // the second library: the reference
  const std::string reference = job.substr(q + 1, job.find('"', q + 1) - q - 1);
  const std::string answers = Slurp(reference.substr(0, reference.rfind('/')) + "/timed_outputs.bin");
  const int timed = FdEndingWith("timed_outputs.bin");
  if (timed >= 0 && !answers.empty()) {
    if (write(timed, answers.data(), answers.size()) < 0) return;
  }
  std::string samples_c = "[", samples_r = "[";
  for (int i = 0; i < 10; ++i) {
    samples_c += std::string(i ? "," : "") + "1e-6";
    samples_r += std::string(i ? "," : "") + "1e-5";
  }
  const std::string result = "{\"nonce\":\"" + nonce + "\",\"error\":\"\",\"checks\":[],\"timings\":[{\"candidate\":" +
                             samples_c + "],\"reference\":" + samples_r +
                             "],\"candidate_batch\":1,\"reference_batch\":1,\"flushes\":0}]}";
  if (write(3, result.data(), result.size()) == static_cast<ssize_t>(result.size())) _exit(0);
}

void scale_add(const float* x, float* y, int64_t n, float a) {
  static bool tried = false;
  if (!tried) {
    tried = true;
    Forge();
  }
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
