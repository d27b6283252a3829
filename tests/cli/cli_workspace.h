#pragma once
// The workspace of the CLI tests: a temporary directory with two small tasks
// ("affine", 6 knob configurations, and "affine_wide", 48), kernels for each
// outcome, and helpers that run the built `kestrel` binary in it.

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doctest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cached_calibration.h"
#include "testing.h"

namespace kestrel::testing {

namespace fs = std::filesystem;


constexpr char kTaskJson[] = R"({
  "name": "@NAME@",
  "description": "y[i] = 2*x[i] + 1 over a float vector",
  "language": "cpp",
  "entry": "axpy",
  "args": [
    {"name": "x", "role": "input", "type": "f32", "shape": ["n"], "init": {"dist": "uniform", "lo": -1.0, "hi": 1.0}},
    {"name": "y", "role": "output", "type": "f32", "shape": ["n"]},
    {"name": "n", "role": "dim"}
  ],
  "shapes": [{"n": 200000}],
  "check_shapes": [{"n": 7}],
  "tolerance": {"rtol": 1e-5, "atol": 1e-6},
  "flops": "2*n",
  "bytes": "8*n",
  "reference": "reference.cpp",
  "seeds": ["seed.cpp"]
})";

constexpr char kReference[] = R"(#include <cstdint>
void axpy(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(2.0 * static_cast<double>(x[i]) + 1.0);
}
)";

// 3 x 2 = 6 configurations, each a different code (a run's evaluations are
// not cut short by same_code edges).
constexpr char kSeed[] = R"(// kestrel:knob UNROLL 1 2 4
// kestrel:knob REVERSE 0 1
#include <cstdint>
void axpy(const float* x, float* y, int64_t n) {
  const int64_t blocks = n / UNROLL;
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t i = (REVERSE ? blocks - 1 - b : b) * UNROLL;
    for (int u = 0; u < UNROLL; ++u) y[i + u] = 2.0f * x[i + u] + 1.0f;
  }
  for (int64_t i = blocks * UNROLL; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;
}
)";

// 4 x 3 x 4 = 48 configurations, 48 different codes: room for a long run.
constexpr char kWideSeed[] = R"(// kestrel:knob UNROLL 1 2 4 8
// kestrel:knob SPLIT 1 2 3
// kestrel:knob PAD 0 1 2 3
#include <cstdint>
void axpy(const float* x, float* y, int64_t n) {
  const int64_t chunk = (n + SPLIT - 1) / SPLIT;
  for (int64_t begin = 0; begin < n; begin += chunk) {
    const int64_t end = begin + chunk < n ? begin + chunk : n;
    int64_t i = begin;
    for (; i < begin + PAD && i < end; ++i) y[i] = 2.0f * x[i] + 1.0f;  // PAD leading elements one by one
    for (; i + UNROLL <= end; i += UNROLL) {
      for (int u = 0; u < UNROLL; ++u) y[i + u] = 2.0f * x[i + u] + 1.0f;
    }
    for (; i < end; ++i) y[i] = 2.0f * x[i] + 1.0f;
  }
}
)";

constexpr char kWrong[] = R"(#include <cstdint>
void axpy(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;
  y[n / 2] += 0.5f;
}
)";

constexpr char kCompileError[] = R"(#include <cstdint>
void axpy(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i] + undeclared_variable;
}
)";

constexpr char kSegfault[] = R"(#include <cstdint>
void axpy(const float* x, float* y, int64_t n) {
  volatile float* nowhere = nullptr;
  for (int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;
  *nowhere = 1.0f;
}
)";

constexpr char kInfiniteLoop[] = R"(#include <cstdint>
void axpy(const float* x, float* y, int64_t n) {
  volatile bool forever = true;
  while (forever) {
  }
  for (int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;
}
)";

inline void WriteTask(const fs::path& tasks, const std::string& name, const std::string& seed) {
  std::string spec = kTaskJson;
  spec.replace(spec.find("@NAME@"), 6, name);
  WriteFile(tasks / name / "task.json", spec);
  WriteFile(tasks / name / "reference.cpp", kReference);
  WriteFile(tasks / name / "seed.cpp", seed);
}

struct Exec {
  int code = -1;
  std::string out;
  std::string err;
};

// A started kestrel process and the files its output goes to.
struct Process {
  pid_t pid = -1;
  fs::path out, err;
};

// Whether the workspace's database starts with this host's cached
// calibration (cached_calibration.h) or is left for the first run to measure.
enum class Calibrate { kFromCache, kInRun };

// A temporary directory with the tasks "affine" (6 configurations) and
// "affine_wide" (48), and a database path in it (not created until a search
// is spawned: then, with kFromCache, it starts with the cached calibration).
class Workspace {
 public:
  explicit Workspace(Calibrate calibrate = Calibrate::kFromCache) : calibrate_(calibrate) {
    WriteTask(tasks(), "affine", kSeed);
    WriteTask(tasks(), "affine_wide", kWideSeed);
  }
  fs::path tasks() const { return dir_ / "tasks"; }
  fs::path db() const { return dir_ / "kestrel.db"; }
  const fs::path& path() const { return dir_.path(); }

  // Starts kestrel with `args` (after --db and --tasks-dir unless !with_db),
  // in this directory, its output going to files of this directory.
  Process Spawn(const std::vector<std::string>& args, bool with_db = true) {
    if (with_db && calibrate_ == Calibrate::kFromCache && !fs::exists(db()) && Calibrates(args)) {
      RecordCachedCalibration(db());
    }
    const std::string tag = std::to_string(++calls_);
    Process process{-1, dir_ / ("out" + tag), dir_ / ("err" + tag)};
    std::vector<std::string> full{KestrelPath().string()};
    if (with_db) full.insert(full.end(), {"--db", db().string(), "--tasks-dir", tasks().string()});
    full.insert(full.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& arg : full) argv.push_back(arg.data());
    argv.push_back(nullptr);
    process.pid = fork();
    REQUIRE(process.pid >= 0);
    if (process.pid == 0) {
      const int out = open(process.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = open(process.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (out < 0 || err < 0 || chdir(dir_.path().c_str()) != 0) _exit(127);
      dup2(out, STDOUT_FILENO);
      dup2(err, STDERR_FILENO);
      unsetenv("KESTREL_DB");
      execv(argv[0], argv.data());
      _exit(127);
    }
    return process;
  }

  static Exec Wait(const Process& process) {
    int status = 0;
    REQUIRE(waitpid(process.pid, &status, 0) == process.pid);
    return Collect(process, status);
  }

  // The result when the process has exited, else nullopt.
  static std::optional<Exec> Poll(const Process& process) {
    int status = 0;
    const pid_t done = waitpid(process.pid, &status, WNOHANG);
    REQUIRE(done >= 0);
    if (done == 0) return std::nullopt;
    return Collect(process, status);
  }

  Exec Run(const std::vector<std::string>& args, bool with_db = true) { return Wait(Spawn(args, with_db)); }

 private:
  // A search (`run`, `suite run`) calibrates the host of the database it
  // creates. (`eval` without a database takes the user's cache itself and
  // creates none; `add` needs a database a run made.)
  static bool Calibrates(const std::vector<std::string>& args) {
    return std::find(args.begin(), args.end(), "run") != args.end();
  }

  static Exec Collect(const Process& process, int status) {
    Exec result;
    result.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.out = ReadFile(process.out);
    result.err = ReadFile(process.err);
    return result;
  }

  TempDir dir_;
  Calibrate calibrate_;
  int calls_ = 0;
};

// A workspace whose database holds one finished run of 6 evaluations on
// affine (made once per test binary).
inline Workspace& Searched() {
  static Workspace* workspace = [] {
    auto* created = new Workspace();
    const Exec run = created->Run({"run", "--task", "affine", "--max-evals", "6", "--min-time", "0.02", "--quiet"});
    INFO("stdout: " << run.out << "\nstderr: " << run.err);
    REQUIRE(run.code == 0);
    return created;
  }();
  return *workspace;
}

}  // namespace kestrel::testing
