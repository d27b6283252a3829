// The Slurm executor (docs/SLURM.md) against a real single-node Slurm:
// scripts/slurm_local starts munged, slurmctld and slurmd as root from a
// temporary folder, and stops them when the tests end. Searches whose
// measurements are Slurm jobs: one finds the faster kernels of the command
// protocol example; in another, jobs that never answer are killed by their
// time limit, recorded as timed_out, and the search goes on.
//
// Needs root and Debian's slurmctld, slurmd, slurm-client and munge
// (scripts/setup installs them); without them the tests say so and skip.

#include <doctest.h>
#include <signal.h>
#include <stdlib.h>

#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_workspace.h"
#include "evaluators/slurm_executor.h"
#include "evaluators/subprocess.h"
#include "testing.h"

using namespace kestrel;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

using testing::Exec;
using testing::Workspace;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string Shell(const std::string& command, int& code) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = ::pclose(pipe);
  code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// The cluster, started once for the whole program and stopped at exit.
class LocalSlurm {
 public:
  static LocalSlurm& Get() {
    static LocalSlurm slurm;
    return slurm;
  }
  bool up() const { return up_; }
  const std::string& why_not() const { return why_not_; }
  ~LocalSlurm() {
    int code = 0;
    if (started_) Shell(Script() + " stop " + dir_.path().string() + " 2>&1", code);
  }

 private:
  LocalSlurm() {
    int code = 0;
    const std::string out = Shell(Script() + " start " + dir_.path().string() + " 2>&1", code);
    started_ = code != 77;
    const std::string prefix = "export SLURM_CONF=";
    const auto at = out.find(prefix);
    if (code == 0 && at != std::string::npos) {
      std::string conf = out.substr(at + prefix.size());
      conf = conf.substr(0, conf.find('\n'));
      ::setenv("SLURM_CONF", conf.c_str(), 1);
      up_ = true;
    } else {
      why_not_ = "scripts/slurm_local start exited " + std::to_string(code) + ": " + out;
    }
  }
  static std::string Script() { return (testing::SourceDir() / "scripts" / "slurm_local").string(); }

  testing::TempDir dir_;
  bool up_ = false;
  bool started_ = false;
  std::string why_not_;
};

// Copies the command protocol example's task into the workspace's tasks
// folder, with `seed` as its seed when given.
void CopyExample(const Workspace& workspace, const std::optional<std::string>& seed = std::nullopt) {
  const fs::path from = testing::SourceDir() / "examples" / "command" / "poly";
  const fs::path to = workspace.tasks() / "poly";
  fs::create_directories(to);
  for (const auto& entry : fs::directory_iterator(from)) fs::copy_file(entry.path(), to / entry.path().filename());
  if (seed) testing::WriteFile(to / "seed.c", *seed);
}

json Config(const Workspace& workspace, const json& run, const std::string& time_limit) {
  json config = json::parse(testing::ReadFile(testing::SourceDir() / "examples" / "command" / "poly.json"));
  if (!run.is_null()) config["evaluator"]["run"] = run;
  config["evaluator"]["min_time"] = 0.02;
  config["evaluator"]["min_samples"] = 5;
  config["executor"] = {{"kind", "slurm"}, {"partition", "kestrel"}, {"time_limit", time_limit},
                        {"shared_dir", (workspace.path() / "shared").string()}};
  config["parallel"] = {{"compile_jobs", 2}, {"measure_slots", 2}};
  config["confirm"] = {{"top", 2}, {"rounds", 1}};
  return config;
}

std::string WriteConfig(const Workspace& workspace, const json& config) {
  const fs::path path = workspace.path() / "slurm.json";
  testing::WriteFile(path, config.dump(2));
  return path.string();
}

#define REQUIRE_SLURM()                                                   \
  if (!LocalSlurm::Get().up()) {                                          \
    MESSAGE("no local Slurm, skipped: " << LocalSlurm::Get().why_not()); \
    return;                                                               \
  }

}  // namespace

// Four kernels of the workspace's "affine" task: MODE 0 and 1 are correct
// (and different code), 2 never returns, 3 dies of SIGSEGV.
constexpr char kModeSeed[] = R"(// kestrel:knob MODE 0 1 2 3
#include <cstdint>
void axpy(const float* x, float* y, int64_t n) {
  if (MODE == 2) {
    volatile bool forever = true;
    while (forever) {
    }
  }
  if (MODE == 3) *static_cast<volatile float*>(nullptr) = 1.0f;
  if (MODE == 1) {  // the same results by other code (a same_code copy would not run as a job)
    for (int64_t i = n; i-- > 0;) y[i] = x[i] * 2.0f + 1.0f;
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;
}
)";

TEST_SUITE("slurm") {
  TEST_CASE("the Slurm executor keeps RunSubprocess's contract: stdin, result on fd 3, environment, limits, timeout") {
    REQUIRE_SLURM();
    testing::TempDir dir;
    SlurmOptions slurm;
    slurm.partition = "kestrel";
    slurm.time_limit = "5:00";
    slurm.shared_dir = dir.path();
    const auto job = [&](const std::string& script, const std::string& stem, double timeout_s = 30) {
      SubprocessOptions process;
      process.argv = {"sh", "-c", script};
      process.cwd = dir.path();
      process.timeout_s = timeout_s;
      process.result_pipe = true;
      process.env = EnvironmentWith({"KESTREL_SLURM_PROBE=it's set"});
      process.cpu_limit_s = 2;
      process.file_size_limit_bytes = 4096;
      process.stdin_data = "from stdin";
      auto executor = MakeSlurmExecutor(slurm);
      REQUIRE_MESSAGE(executor.has_value(), testing::ErrorOf(executor));
      auto ran = (*executor)->Run(process, stem);
      REQUIRE_MESSAGE(ran.has_value(), testing::ErrorOf(ran));
      return *ran;
    };
    const SubprocessResult ok = job("echo \"$KESTREL_SLURM_PROBE\" >&3; cat >&3; echo to the log", "ok");
    CHECK(ok.Succeeded());
    CHECK(ok.result == "it's set\nfrom stdin");
    CHECK(Contains(ok.log, "to the log"));
    CHECK(Contains(ok.job, "Slurm job "));

    const SubprocessResult exit3 = job("exit 3", "exit3");
    CHECK(exit3.exit_code == 3);
    CHECK(exit3.signal == 0);
    CHECK_FALSE(exit3.timed_out);

    const SubprocessResult segv = job("kill -SEGV $$", "segv");
    CHECK(segv.signal == SIGSEGV);

    const SubprocessResult hang = job("sleep 60", "hang", 2);
    CHECK(hang.timed_out);
    CHECK(hang.Describe(2) == "timed out after 2s (wall-clock limit)");

    const SubprocessResult spin = job("while :; do :; done", "spin");
    CHECK(spin.signal == SIGXCPU);  // RLIMIT_CPU of 2 s, before the 30 s wall clock

    const SubprocessResult big = job("exec head -c 100000 /dev/zero > big.bin", "big");
    CHECK(big.signal == SIGXFSZ);  // RLIMIT_FSIZE of 4096 bytes

    slurm.partition = "no_such_partition";
    const SubprocessResult refused = job("true", "refused");
    CHECK_FALSE(refused.Succeeded());
    CHECK_MESSAGE(Contains(refused.lost, "sbatch could not submit the job"), refused.lost);
    CHECK(Contains(refused.lost, "partition"));
  }

  TEST_CASE("a search whose measurements are Slurm jobs finds the faster kernels and stores them") {
    REQUIRE_SLURM();
    Workspace workspace(testing::Calibrate::kInRun);  // as a run makes it (the command evaluator does not calibrate)
    CopyExample(workspace);
    const std::string config = WriteConfig(workspace, Config(workspace, nullptr, "5:00"));
    const Exec run = workspace.Run({"run", config, "--max-evals", "6", "--quiet"});
    INFO("run stderr: " << run.err);
    REQUIRE(run.code == 0);
    const json runs = json::parse(workspace.Run({"runs", "--json"}).out);
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].at("evaluations") == 6);
    const json rows = json::parse(workspace.Run({"best", "--json"}).out);
    REQUIRE(!rows.empty());
    CHECK(rows[0].at("speedup").get<double>() > 0.5);
    const json shown = json::parse(workspace.Run({"show", std::to_string(rows[0].at("node").get<int>()), "--json"}).out);
    for (const json& m : shown.at("measurements")) {
      CHECK(m.at("outcome") == "measured");
      CHECK_MESSAGE(Contains(m.at("log").get<std::string>(), "measured by Slurm job"), m.at("log"));
    }
  }

  TEST_CASE("a job killed by its time limit is timed_out, and the search goes on") {
    REQUIRE_SLURM();
    Workspace workspace(testing::Calibrate::kInRun);  // as a run makes it (the command evaluator does not calibrate)
    // Four candidates: HANG=1 never answers; TABLE=1 is the faster kernel.
    std::string seed = testing::ReadFile(testing::SourceDir() / "examples" / "command" / "poly" / "seed.c");
    seed.replace(seed.find("// kestrel:knob FLOAT 0 1"), std::string("// kestrel:knob FLOAT 0 1").size(),
                 "// kestrel:knob HANG 0 1");
    seed.replace(seed.find("// kestrel:knob UNROLL 1 2 4\n"), std::string("// kestrel:knob UNROLL 1 2 4\n").size(), "");
    CopyExample(workspace, seed);
    const json run_command = {"bash",     (testing::SourceDir() / "tests" / "cli" / "slurm_harness.sh").string(),
                              "{knobs}",  "{build_dir}/bench",
                              "{answer}", "{nonce}",
                              "{seed}",   "{min_time}",
                              "{min_samples}", "{shapes}"};
    json hang_config = Config(workspace, run_command, "1");  // one minute
    // The run command's own wall clock above Slurm's limit: Slurm's TIMEOUT ends the hung jobs.
    hang_config["evaluator"]["timeout_s"] = 120;
    const std::string config = WriteConfig(workspace, hang_config);
    const Exec run = workspace.Run({"run", config, "--max-evals", "4", "--quiet"});
    INFO("run stderr: " << run.err);
    REQUIRE(run.code == 0);
    const json runs = json::parse(workspace.Run({"runs", "--json"}).out);
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].at("evaluations") == 4);
    int timed_out = 0, measured = 0;
    for (int node = 1; node <= 4; ++node) {
      const json shown = json::parse(workspace.Run({"show", std::to_string(node), "--json"}).out);
      const json& m = shown.at("measurements").at(0);
      const bool hangs = shown.at("knobs").at("HANG") == "1";
      INFO("node " << node << ": " << m.at("outcome") << ": " << m.at("reason"));
      if (hangs) {
        CHECK(m.at("outcome") == "timed_out");
        CHECK(Contains(m.at("reason").get<std::string>(), "hit its time limit (1)"));
        timed_out += m.at("outcome") == "timed_out";
      } else {
        CHECK(m.at("outcome") == "measured");
        measured += m.at("outcome") == "measured";
      }
    }
    CHECK(timed_out == 2);
    CHECK(measured == 2);
    const json rows = json::parse(workspace.Run({"best", "--json"}).out);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].at("knobs").at("HANG") == "0");
  }

  TEST_CASE("the cpu evaluator's jobs and builds run on Slurm: a hang and a crash there are outcomes") {
    REQUIRE_SLURM();
    Workspace workspace(testing::Calibrate::kInRun);  // the calibration is part of what runs on Slurm
    testing::WriteTask(workspace.tasks(), "affine_modes", kModeSeed);
    const json config = {{"task", "affine_modes"},
                         {"evaluator", {{"kind", "cpu"}, {"flags", {"-O2"}}, {"min_time", 0.02}, {"min_samples", 5},
                                        {"timeout_s", 3}}},
                         {"executor", {{"kind", "slurm"}, {"partition", "kestrel"}, {"time_limit", "5:00"},
                                       {"shared_dir", (workspace.path() / "shared").string()}, {"builds", true}}},
                         {"parallel", {{"compile_jobs", 2}, {"measure_slots", 2}}},
                         {"confirm", {{"top", 1}, {"rounds", 1}}}};
    const Exec run = workspace.Run({"run", WriteConfig(workspace, config), "--max-evals", "4"});
    INFO("run stderr: " << run.err);
    REQUIRE(run.code == 0);
    // The calibration ran as a job too (its figures, not "no calibration").
    CHECK(Contains(run.err, "GFLOP/s peak"));
    std::map<std::string, json> by_mode;
    for (int node = 1; node <= 4; ++node) {
      const json shown = json::parse(workspace.Run({"show", std::to_string(node), "--json"}).out);
      by_mode[shown.at("knobs").at("MODE").get<std::string>()] = shown.at("measurements").at(0);
    }
    REQUIRE(by_mode.size() == 4);
    for (const std::string mode : {"0", "1"}) {
      const json& m = by_mode[mode];
      CHECK_MESSAGE(m.at("outcome") == "measured", m.at("reason"));
      CHECK_MESSAGE(Contains(m.at("log").get<std::string>(), "ran as Slurm job"), m.at("log"));
    }
    CHECK(by_mode["2"].at("outcome") == "timed_out");
    CHECK_MESSAGE(Contains(by_mode["2"].at("reason").get<std::string>(), "timed out after 3s"), by_mode["2"]);
    CHECK(by_mode["3"].at("outcome") == "crashed");
    CHECK_MESSAGE(Contains(by_mode["3"].at("reason").get<std::string>(), "killed by SIGSEGV"), by_mode["3"]);
    const json rows = json::parse(workspace.Run({"best", "--json"}).out);
    REQUIRE(rows.size() == 2);
    // Every step was a job of its own: the host probe, the compiler's version,
    // the builds (reference and candidates), the calibration, the runner's jobs (the
    // reference's outputs, then one evaluate job per measurement).
    int code = 0;
    const std::string jobs = Shell("scontrol show jobs 2>&1", code);
    for (const std::string name : {"kestrel-host", "kestrel-compiler-version", "kestrel-build", "kestrel-calibration",
                                   "kestrel-calibration-build", "kestrel-outputs", "kestrel-evaluate"}) {
      const bool ran = Contains(jobs, "JobName=" + name + "\n") || Contains(jobs, "JobName=" + name + " ");
      CHECK_MESSAGE(ran, name);
    }
    // Nothing is left in the shared folder: the evaluator's work dir is removed with it.
    CHECK(fs::is_empty(workspace.path() / "shared"));
  }
}
