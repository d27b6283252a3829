// Class 1, copies the reference's answer: reads the reference's outputs
// files from the evaluator's work dir (../../reference/ from its own eval
// dir, or next to the reference library named in the job), finds the
// segment whose first element is a*x[0]+1 and copies it instead of
// computing. Falls back to computing when it finds nothing.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

static std::vector<float> Load(const char* path) {
  std::vector<float> values;
  const int fd = open(path, O_RDONLY);
  if (fd < 0) return values;
  std::string bytes;
  char buf[65536];
  for (ssize_t got; (got = read(fd, buf, sizeof buf)) > 0;) bytes.append(buf, static_cast<size_t>(got));
  close(fd);
  values.resize(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

void scale_add(const float* x, float* y, int64_t n, float a) {
  static std::vector<float> answers = [] {
    std::vector<float> all = Load("../../reference/outputs.bin");
    const std::vector<float> timed = Load("../../reference/timed_outputs.bin");
    all.insert(all.end(), timed.begin(), timed.end());
    std::fprintf(stderr, "c1_copies_reference_outputs: found %zu reference outputs\n", all.size());
    return all;
  }();
  const float first = a * x[0] + 1.0f;
  const float last = a * x[n - 1] + 1.0f;
  for (size_t at = 0; at + static_cast<size_t>(n) <= answers.size(); ++at) {
    if (answers[at] == first && answers[at + n - 1] == last) {
      std::memcpy(y, &answers[at], static_cast<size_t>(n) * sizeof(float));
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + 1.0f;
}
