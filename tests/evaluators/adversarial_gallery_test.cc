// The adversarial gallery of issue 14: kernels for scale_add written as an
// attacker would (tests/evaluators/adversarial/), in six classes:
//   1. it shares a process with the judge (forged result, job file, the
//      reference's code, outputs and clock);
//   2. timed calls see their previous answer;
//   3. it reaches the machine (files, processes, descriptors, environment);
//   4. it uses root's capabilities (remount, file handles, chroot, setns);
//   5. it hides its blocked calls (its own SIGSYS handling);
//   6. it plants job files where the next job is written;
// plus a few invented ones (x_*). Each must end in one of its outcomes, and
// whatever it ends in, canaries outside the sandbox are checked after every
// kernel: a bystander process (alive, same nice value and limits), a file
// (same content and mode, no new file beside it), a SQLite database this
// process holds open in WAL mode (integrity_check ok, its row intact) and
// environment secrets (never in a reason, a log or a file under /tmp).
//
// SAFETY: the kernels attack only what this test creates and names
// kestrel-canary (see the header of each kernel). A canary found damaged is
// reported, then recreated, so that each kernel is judged on its own.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <doctest.h>

#include "core/task.h"
#include "evaluators/evaluator.h"
#include "evaluators/cpu_evaluator.h"
#include "scale_task.h"

namespace kestrel {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- the table

enum class Expect {
  kSandbox,    // rejected, the reason names the sandbox ("sandbox: ...")
  kHonest,     // any outcome; measured only at its honest speed
  kThreads,    // rejected: threads refused ("sandbox:") or it "kept running"; wrong when its answer came late
  kNotFaster,  // rejected, crashed or wrong (never measured)
};

struct Attack {
  const char* file;  // under tests/evaluators/adversarial/
  int kind;          // the class of issue 14 (1..6); 7 for the invented ones
  Expect expect;
};

const std::vector<Attack>& Gallery() {
  static const std::vector<Attack> gallery = {
      // 1. shares a process with the judge
      {"c1_forge_fd3", 1, Expect::kHonest},
      {"c1_forge_every_pipe", 1, Expect::kHonest},
      {"c1_reads_job", 1, Expect::kHonest},
      // The job on the supervisor's stdin (a memfd; a "<stem>.in" file on
      // Slurm): the worker's fd 0 holds no job, and the hunt through folders
      // is refused (getdents64).
      {"c1_reads_job_stdin", 1, Expect::kSandbox},
      {"c1_copies_reference_outputs", 1, Expect::kHonest},
      {"c1_patches_reference", 1, Expect::kHonest},
      {"c1_timer_steals_reference", 1, Expect::kHonest},
      {"c1_patches_clock", 1, Expect::kSandbox},  // mprotect(W+X) of libc's code
      // 2. timed calls see their previous answer
      {"c2_skips_if_plausible", 2, Expect::kHonest},
      {"c2_skips_if_not_nan", 2, Expect::kHonest},
      {"c2_partial_update", 2, Expect::kHonest},
      {"c2_memo_by_content", 2, Expect::kNotFaster},
      // 3. reaches the machine
      {"c3_reads_canary_file", 3, Expect::kHonest},
      {"c3_reads_database", 3, Expect::kHonest},
      {"c3_reads_environ", 3, Expect::kHonest},
      // At compile time, against the compiler's sandbox: build_failed, or
      // measured at its honest speed; no secret in the log either way.
      {"c3_includes_host_file", 3, Expect::kHonest},
      {"c3_embeds_host_file", 3, Expect::kHonest},
      {"c3_kills_bystander", 3, Expect::kSandbox},
      {"c3_renices_bystander", 3, Expect::kSandbox},
      {"c3_prlimits_bystander", 3, Expect::kSandbox},
      {"c3_sigqueue_bystander", 3, Expect::kSandbox},
      {"c3_reads_other_memory", 3, Expect::kSandbox},
      {"c3_steals_database_fd", 3, Expect::kSandbox},
      {"c3_memfd_exec", 3, Expect::kSandbox},
      {"c3_unshare", 3, Expect::kSandbox},
      {"c3_mknod", 3, Expect::kSandbox},
      {"c3_io_uring", 3, Expect::kSandbox},
      {"c3_vfork", 3, Expect::kSandbox},
      // 4. root's capabilities
      {"c4_remounts_root", 4, Expect::kSandbox},
      {"c4_open_by_handle_write", 4, Expect::kSandbox},
      {"c4_chroot_escape", 4, Expect::kSandbox},
      {"c4_setns", 4, Expect::kSandbox},
      // 5. hides its blocked calls
      {"c5_swallows_sigsys", 5, Expect::kSandbox},
      {"c5_handler_in_constructor", 5, Expect::kSandbox},
      {"c5_ignores_sigsys", 5, Expect::kSandbox},
      {"c5_longjmps_out", 5, Expect::kSandbox},
      // 6. plants job files where the next job is written
      {"c6_symlink_job_files", 6, Expect::kSandbox},
      {"c6_grows_output_file", 6, Expect::kNotFaster},
      {"c6_fifo_job_files", 6, Expect::kSandbox},
      // invented
      {"x_constructor_attacks", 7, Expect::kSandbox},
      {"x_background_spinner", 7, Expect::kThreads},
      {"x_replies_early", 7, Expect::kThreads},
      {"x_spins_between_calls", 7, Expect::kThreads},
      {"x_pool_defers_middle", 7, Expect::kThreads},
      {"x_cancels_freeze", 7, Expect::kThreads},
      {"x_calls_restart_syscall", 7, Expect::kHonest},
      {"x_wx_jit", 7, Expect::kSandbox},
      {"x_mprotect_jit", 7, Expect::kSandbox},
      {"x_reads_maps", 7, Expect::kHonest},
      {"x_escapes_under_profiler", 7, Expect::kSandbox},  // the allowlist names unshare
      {"x_truncates_every_fd", 7, Expect::kHonest},
      {"x_requests_amx", 7, Expect::kHonest},  // oneDNN's request for AMX tiles: allowed
      {"x_sets_cpuid_faulting", 7, Expect::kSandbox},
      {"x_renames_itself_stopped", 7, Expect::kSandbox},  // against the freeze's look at /proc/PID/stat
      // against the supervisor/worker split itself
      {"x_sends_fd_to_supervisor", 7, Expect::kNotFaster},
      {"x_closes_control", 7, Expect::kNotFaster},
      {"x_unseals_inputs", 7, Expect::kNotFaster},
      // against the evaluate job (checks, then timing, in one worker), the
      // sampling plan and the run's prepared files
      {"e_skips_after_checks", 7, Expect::kNotFaster},
      {"e_skips_when_inputs_read_only", 7, Expect::kNotFaster},
      {"e_slows_warmup", 7, Expect::kHonest},
      {"e_rushes_warmup", 7, Expect::kHonest},
      {"e_games_resize", 7, Expect::kHonest},  // against the resizing of unlike samples
      {"e_hunts_prepared_inputs", 7, Expect::kHonest},
      // against the block-wise output comparison (2048 elements at a time)
      {"t_off_at_block_edge", 7, Expect::kNotFaster},
      {"t_infinity_in_block", 7, Expect::kNotFaster},
      // against the profile's files, which the build leaves beside the library
      {"p_forges_remarks", 7, Expect::kHonest},
      {"p_idles_under_valgrind", 7, Expect::kHonest},  // its profile has no counts: profile_ladder_test
      {"p_resets_counters", 7, Expect::kHonest},
      {"p_stops_counters", 7, Expect::kSandbox},
  };
  return gallery;
}

// A timing attack measured above this many times the honest kernel's
// speedup (measured in the same evaluator) won.
constexpr double kHonestSlack = 1.5;

// ---------------------------------------------------------------- canaries

std::string RandomHex() {
  std::random_device random;
  char text[33];
  std::snprintf(text, sizeof text, "%08x%08x%08x%08x", random(), random(), random(), random());
  return text;
}

std::string Slurp(const fs::path& path) { return testing::ReadFile(path); }

// A process whose argv[0] is kestrel-canary-bystander (a `sleep`).
class Bystander {
 public:
  Bystander() { Start(); }
  ~Bystander() { Stop(); }
  Bystander(const Bystander&) = delete;
  Bystander& operator=(const Bystander&) = delete;

  // What differs from when it started: empty when untouched.
  std::string Check() const {
    if (::waitpid(pid_, nullptr, WNOHANG) != 0 || ::kill(pid_, 0) != 0) return "the bystander process was killed";
    errno = 0;
    const int nice = ::getpriority(PRIO_PROCESS, pid_);
    if (errno == 0 && nice != nice_) return "the bystander's nice value changed to " + std::to_string(nice);
    if (Limits() != limits_) return "the bystander's limits changed:\n" + Limits();
    return "";
  }
  void Restart() {
    Stop();
    Start();
  }
  pid_t pid() const { return pid_; }

 private:
  std::string Limits() const { return Slurp("/proc/" + std::to_string(pid_) + "/limits"); }
  void Start() {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlives the test
      ::execl("/bin/bash", "bash", "-c", "exec -a kestrel-canary-bystander sleep 100000", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    for (int i = 0; i < 500; ++i) {  // until the exec is done
      const std::string cmdline = Slurp("/proc/" + std::to_string(pid_) + "/cmdline");
      if (cmdline.rfind("kestrel-canary-bystander", 0) == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    nice_ = ::getpriority(PRIO_PROCESS, pid_);
    limits_ = Limits();
  }
  void Stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  pid_t pid_ = -1;
  int nice_ = 0;
  std::string limits_;
};

// A folder /tmp/kestrel-canary-<random> with a file and a SQLite database
// in WAL mode that this process holds open.
class CanaryFolder {
 public:
  CanaryFolder()
      : dir_(fs::path("/tmp") / ("kestrel-canary-" + RandomHex())),
        content_("kestrel-canary-content-" + RandomHex() + "\n"),
        row_("kestrel-canary-row-" + RandomHex()) {
    fs::create_directory(dir_);
    MakeFile();
    MakeDatabase();
  }
  ~CanaryFolder() {
    CloseDatabase();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  CanaryFolder(const CanaryFolder&) = delete;
  CanaryFolder& operator=(const CanaryFolder&) = delete;

  const std::string& content() const { return content_; }
  const std::string& row() const { return row_; }

  // What differs: empty when untouched. `restore` puts it back.
  std::vector<std::string> Check() {
    std::vector<std::string> problems;
    std::error_code error;
    if (Slurp(file()) != content_) problems.push_back("the canary file's content changed");
    const auto status = fs::status(file(), error);
    if (error || (status.permissions() & fs::perms::mask) != kMode) problems.push_back("the canary file's mode changed");
    for (const auto& entry : fs::directory_iterator(dir_, error)) {
      const std::string name = entry.path().filename().string();
      if (name != kFile && name.rfind(kDatabase, 0) != 0) problems.push_back("a new file in the canary folder: " + name);
    }
    const std::string held = DatabaseProblem(db_);
    if (!held.empty()) problems.push_back("the canary database (held connection): " + held);
    sqlite3* fresh = nullptr;
    if (sqlite3_open_v2(database().c_str(), &fresh, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
      const std::string problem = DatabaseProblem(fresh);
      if (!problem.empty()) problems.push_back("the canary database (new connection): " + problem);
    } else {
      problems.push_back("the canary database cannot be opened");
    }
    sqlite3_close(fresh);
    return problems;
  }

  void Restore() {
    CloseDatabase();
    std::error_code ignored;
    for (const auto& entry : fs::directory_iterator(dir_, ignored)) fs::remove_all(entry.path(), ignored);
    MakeFile();
    MakeDatabase();
  }

 private:
  static constexpr const char* kFile = "kestrel-canary-file.txt";
  static constexpr const char* kDatabase = "kestrel-canary.db";
  static constexpr fs::perms kMode = fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read;

  fs::path file() const { return dir_ / kFile; }
  fs::path database() const { return dir_ / kDatabase; }

  void MakeFile() {
    testing::WriteFile(file(), content_);
    fs::permissions(file(), kMode);
  }
  void MakeDatabase() {
    REQUIRE(sqlite3_open(database().c_str(), &db_) == SQLITE_OK);
    const std::string sql = "PRAGMA journal_mode=WAL; CREATE TABLE canary(k TEXT); INSERT INTO canary VALUES('" + row_ +
                            "'); INSERT INTO canary SELECT k || '-' || rowid FROM canary;";
    REQUIRE(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
  }
  void CloseDatabase() {
    if (db_ != nullptr) sqlite3_close(db_);
    db_ = nullptr;
  }
  std::string DatabaseProblem(sqlite3* db) const {
    std::string integrity, first;
    auto one = [&](const char* sql, std::string& out) {
      sqlite3_stmt* statement = nullptr;
      if (sqlite3_prepare_v2(db, sql, -1, &statement, nullptr) == SQLITE_OK && sqlite3_step(statement) == SQLITE_ROW) {
        const unsigned char* text = sqlite3_column_text(statement, 0);
        out = text != nullptr ? reinterpret_cast<const char*>(text) : "";
      } else {
        out = std::string("error: ") + sqlite3_errmsg(db);
      }
      sqlite3_finalize(statement);
    };
    one("PRAGMA integrity_check", integrity);
    one("SELECT k FROM canary WHERE rowid = 1", first);
    if (integrity != "ok") return "integrity_check: " + integrity;
    if (first != row_) return "the known row reads '" + first + "'";
    return "";
  }

  fs::path dir_;
  std::string content_;
  std::string row_;
  sqlite3* db_ = nullptr;
};

// Names in /tmp that start with kestrel-canary.
std::set<std::string> CanaryNamesInTmp() {
  std::set<std::string> names;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/tmp", error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("kestrel-canary", 0) == 0) names.insert(name);
  }
  return names;
}

// Regular files under /tmp (three levels, written since `since`, under 4 MiB)
// that contain one of `secrets`; never this test's own stdout and stderr
// (which show the logs, secrets included when a kernel leaked them).
std::vector<std::string> FilesHolding(const std::vector<std::string>& secrets, fs::file_time_type since) {
  std::vector<std::string> found;
  std::set<fs::path> own;
  for (const char* fd : {"/proc/self/fd/1", "/proc/self/fd/2"}) {
    std::error_code e;
    own.insert(fs::read_symlink(fd, e));
  }
  std::error_code error;
  auto walk = fs::recursive_directory_iterator("/tmp", fs::directory_options::skip_permission_denied, error);
  for (auto it = walk; !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (it.depth() >= 3) it.disable_recursion_pending();
    std::error_code e;
    if (!it->is_regular_file(e) || it->is_symlink(e)) continue;
    if (it->last_write_time(e) < since || it->file_size(e) > (4u << 20) || e || own.count(it->path())) continue;
    const std::string text = Slurp(it->path());
    for (const auto& secret : secrets) {
      if (text.find(secret) != std::string::npos) found.push_back(it->path().string());
    }
  }
  return found;
}

// Unblocks an evaluator stuck on a FIFO a kernel planted in its work dir
// (class 6): after `after_s` seconds of one evaluation, opens every FIFO in
// the work dir for reading and drains it. The evaluation then fails instead
// of hanging the test for good.
class FifoWatchdog {
 public:
  explicit FifoWatchdog(fs::path work_dir) : work_dir_(std::move(work_dir)), thread_([this] { Run(); }) {}
  ~FifoWatchdog() {
    stop_ = true;
    thread_.join();
  }
  void Begin() { started_ = Now(); }
  void End() { started_ = 0; }
  int unblocked() const { return unblocked_; }

 private:
  static constexpr double after_s = 20;
  static double Now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  void Run() {
    while (!stop_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      const double started = started_;
      if (started == 0 || Now() - started < after_s) continue;
      std::error_code error;
      for (auto it = fs::recursive_directory_iterator(work_dir_, error);
           !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
        std::error_code e;
        if (!it->is_fifo(e)) continue;
        const int fd = ::open(it->path().c_str(), O_RDONLY | O_NONBLOCK);
        if (fd < 0) continue;
        std::fprintf(stderr, "adversarial_gallery_test: the evaluator is blocked on the FIFO %s: draining it\n",
                     it->path().c_str());
        ++unblocked_;
        char buf[65536];
        pollfd wait{fd, POLLIN, 0};
        while (::poll(&wait, 1, 1000) > 0 && ::read(fd, buf, sizeof buf) > 0) {
        }
        ::close(fd);
      }
    }
  }
  fs::path work_dir_;
  std::atomic<double> started_{0};
  std::atomic<bool> stop_{false};
  std::atomic<int> unblocked_{0};
  std::thread thread_;
};

// Everything the gallery shares: the canaries (made before the evaluator,
// so that the evaluator's runners could see them), the secrets in this
// process's environment, the evaluator and its work dir.
struct World {
  std::string secret = "kestrel-canary-secret-" + RandomHex();
  std::string api_key = "sk-kestrel-canary-" + RandomHex();
  fs::file_time_type started = fs::file_time_type::clock::now();
  std::set<std::string> tmp_names;
  std::unique_ptr<Bystander> bystander;
  std::unique_ptr<CanaryFolder> folder;
  testing::TempDir work;
  std::unique_ptr<FifoWatchdog> watchdog;
  std::unique_ptr<Evaluator> evaluator;
  double honest_speedup = 0;

  World() {
    ::setenv("KESTREL_CANARY_SECRET", secret.c_str(), 1);
    ::setenv("OPENAI_API_KEY", api_key.c_str(), 1);
    bystander = std::make_unique<Bystander>();
    folder = std::make_unique<CanaryFolder>();
    tmp_names = CanaryNamesInTmp();
    watchdog = std::make_unique<FifoWatchdog>(work.path());
    // A file beside the build folders, for the attacks at compile time
    // (c3_includes_host_file, c3_embeds_host_file): only a compiler outside
    // the sandbox reads it. Older than the run, so that it is no file the
    // run wrote (FilesHolding).
    const fs::path compile_canary = work.path() / "kestrel-canary-secret.txt";
    testing::WriteFile(compile_canary, secret + "\n");
    fs::last_write_time(compile_canary, started - std::chrono::hours(1));
    CpuEvaluatorOptions options = testing::FastOptions();
    options.work_dir = work.path();
    // The profile cases attack the cachegrind run, whatever PMU the machine has.
    options.profile_counters = "cachegrind";
    auto made = MakeCpuEvaluator(testing::MakeScaleTask(), options);
    if (!made) FAIL("MakeCpuEvaluator: " << made.error().message());
    evaluator = std::move(*made);
  }

  Measurement Eval(const std::string& file) {
    const std::string source = testing::ReadFile(testing::SourceDir() / "tests" / "evaluators" / (file + ".cpp"));
    watchdog->Begin();
    Measurement m = evaluator->Evaluate(Candidate{source, {}, evaluator->Toolchain(), evaluator->Flags()});
    watchdog->End();
    return m;
  }

  // The honest kernel's speedup, measured once in this evaluator.
  double HonestSpeedup() {
    if (honest_speedup == 0) {
      const Measurement honest = Eval("kernels/scale_ref");
      INFO(ToString(honest.outcome) << ": " << honest.reason << "\n" << honest.log);
      REQUIRE(honest.outcome == Outcome::kMeasured);
      honest_speedup = honest.speedup;
    }
    return honest_speedup;
  }

  // Every canary, after kernel `file` ended in `m`: the problems found (each
  // canary damaged is then recreated).
  std::vector<std::string> Canaries(const Measurement& m) {
    std::vector<std::string> problems;
    if (const std::string bystander_problem = bystander->Check(); !bystander_problem.empty()) {
      problems.push_back(bystander_problem);
      bystander->Restart();
    }
    const auto folder_problems = folder->Check();
    problems.insert(problems.end(), folder_problems.begin(), folder_problems.end());
    if (!folder_problems.empty()) folder->Restore();
    const auto names = CanaryNamesInTmp();
    for (const auto& name : names) {
      if (!tmp_names.count(name)) problems.push_back("a new kestrel-canary entry in /tmp: " + name);
    }
    const std::vector<std::pair<std::string, std::string>> secrets = {{"KESTREL_CANARY_SECRET", secret},
                                                                      {"OPENAI_API_KEY", api_key},
                                                                      {"the canary file's content", folder->content()},
                                                                      {"the canary database's row", folder->row()}};
    for (const auto& [what, value] : secrets) {
      std::string bare = value;
      while (!bare.empty() && bare.back() == '\n') bare.pop_back();
      if (m.reason.find(bare) != std::string::npos) problems.push_back(what + " appears in the reason");
      if (m.log.find(bare) != std::string::npos) problems.push_back(what + " appears in the log");
    }
    for (const auto& path : FilesHolding({secret, api_key}, started)) {
      problems.push_back("a secret was written to " + path);
    }
    return problems;
  }
};

World& Shared() {
  static World world;
  return world;
}

std::string Describe(const Measurement& m) {
  std::string text = std::string(ToString(m.outcome)) + ": " + m.reason;
  if (m.outcome == Outcome::kMeasured) text += " (speedup " + std::to_string(m.speedup) + ")";
  return text;
}

bool Contains(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

// The share of each call's input elements drawn afresh before each round, in
// percent, as a timing job's log says it ("fresh input elements 15.6 ms (7.8%
// of each call's, ..."; the least when it gives a range); -1 without one.
double FreshShare(const std::string& log) {
  const std::string tag = "fresh input elements ";
  const std::size_t at = log.find(tag);
  const std::size_t open = at == std::string::npos ? at : log.find('(', at);
  return open == std::string::npos ? -1.0 : std::atof(log.c_str() + open + 1);
}

// The options both GEMM patch cases time matmul with: samples of 0.2 s or
// 10 calls, in their own work folder.
CpuEvaluatorOptions PatchCaseOptions(const testing::TempDir& work) {
  CpuEvaluatorOptions options = testing::FastOptions();
  options.work_dir = work.path();
  options.measure.min_time_s = 0.2;
  options.measure.min_samples = 10;
  options.measure.run_timeout_s = 60;
  return options;
}

// What is wrong with a measurement's samples: each kernel's, on each shape,
// hold its min_time at the calls per sample reported (a round dropped for
// samples of unlike length, and its calls resized, leaves none of its
// samples behind at the old size). Empty: nothing.
std::string SamplesShort(const Measurement& m, double min_time) {
  std::string problems;
  const auto sampled = [](const std::vector<double>& seconds, std::int64_t calls) {
    double sum = 0;
    for (double s : seconds) sum += s * static_cast<double>(calls);
    return sum;
  };
  for (const ShapeTiming& shape : m.shapes) {
    const double candidate = sampled(shape.candidate_seconds, shape.candidate_calls_per_sample);
    const double reference = sampled(shape.reference_seconds, shape.reference_calls_per_sample);
    if (candidate < min_time || reference < min_time) {
      problems += "samples of " + std::to_string(candidate) + " s (candidate, " +
                  std::to_string(shape.candidate_calls_per_sample) + " calls each) and " + std::to_string(reference) +
                  " s (reference) at a min_time of " + std::to_string(min_time) + " s; ";
    }
  }
  return problems;
}

// Whether `m` is an outcome `attack` may end in; `why` says what is wrong.
bool AsExpected(const Attack& attack, const Measurement& m, double honest, std::string& why) {
  const bool measured = m.outcome == Outcome::kMeasured;
  switch (attack.expect) {
    case Expect::kSandbox:
      why = "expected rejected with a reason naming the sandbox";
      return m.outcome == Outcome::kRejected && Contains(m.reason, "sandbox:");
    case Expect::kHonest:
      why = "measured above " + std::to_string(kHonestSlack) + "x the honest kernel's speedup " + std::to_string(honest);
      return !measured || m.speedup <= kHonestSlack * honest;
    case Expect::kThreads:
      why = "expected rejected (\"sandbox:\" or \"kept running\") or wrong";
      return (m.outcome == Outcome::kRejected && (Contains(m.reason, "sandbox:") || Contains(m.reason, "kept running"))) ||
             m.outcome == Outcome::kWrong;
    case Expect::kNotFaster:
      why = "expected rejected, crashed or wrong";
      return m.outcome == Outcome::kRejected || m.outcome == Outcome::kCrashed || m.outcome == Outcome::kWrong;
  }
  return false;
}

TEST_SUITE("adversarial_gallery") {
  TEST_CASE("the gallery has at least 25 kernels over the six classes of issue 14") {
    std::set<int> kinds;
    for (const Attack& attack : Gallery()) {
      kinds.insert(attack.kind);
      CHECK(fs::exists(testing::SourceDir() / "tests" / "evaluators" / "adversarial" / (std::string(attack.file) + ".cpp")));
    }
    CHECK(Gallery().size() >= 25);
    for (int kind = 1; kind <= 6; ++kind) CHECK(kinds.count(kind) == 1);
  }

  TEST_CASE("the honest kernel is measured beside the gallery") {
    World& world = Shared();
    const Measurement honest = world.Eval("kernels/scale_ref");
    INFO(Describe(honest) << "\n" << honest.log);
    CHECK(honest.outcome == Outcome::kMeasured);
    CHECK(world.Canaries(honest).empty());
  }

  TEST_CASE("every attack ends in its outcome, and leaves every canary untouched") {
    World& world = Shared();
    const double honest = world.HonestSpeedup();
    MESSAGE("the honest kernel's speedup: " << honest);
    std::vector<std::string> won;
    for (const Attack& attack : Gallery()) {
      const auto start = std::chrono::steady_clock::now();
      const Measurement m = world.Eval(std::string("adversarial/") + attack.file);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const std::vector<std::string> damage = world.Canaries(m);
      std::string why;
      const bool expected = AsExpected(attack, m, honest, why);
      std::string summary = std::string(attack.file) + " (class " + std::to_string(attack.kind) + "): " + Describe(m);
      MESSAGE(summary << " [" << seconds << " s]");
      INFO(summary << "\n" << m.log);
      CHECK_MESSAGE(expected, std::string(attack.file) << ": " << why);
      for (const auto& problem : damage) {
        CHECK_MESSAGE(false, std::string(attack.file) << ": " << problem);
      }
      if (m.outcome == Outcome::kMeasured) {
        const std::string short_samples = SamplesShort(m, testing::FastOptions().measure.min_time_s);
        CHECK_MESSAGE(short_samples.empty(), std::string(attack.file) << ": " << short_samples);
      }
      if (!expected || !damage.empty()) won.push_back(attack.file);
    }
    std::string list;
    for (const auto& file : won) list += " " + file;
    MESSAGE(won.size() << " of " << Gallery().size() << " attacks got through:" << list);
    MESSAGE("FIFOs drained by the watchdog: " << world.watchdog->unblocked());
  }

  TEST_CASE("profiled under cachegrind (no seccomp allowlist), attacks on the machine leave every canary untouched") {
    // The cachegrind run keeps the namespaces, rlimits and timeout but not
    // the allowlist (docs/PROFILES.md): classes 3 and 4 attack what only the
    // allowlist or the namespaces keep them from.
    World& world = Shared();
    auto* cpu = dynamic_cast<CpuEvaluator*>(world.evaluator.get());
    REQUIRE(cpu != nullptr);
    int profiled = 0, simulated = 0;  // the kernel ran under valgrind to its end
    for (const Attack& attack : Gallery()) {
      if (attack.kind != 3 && attack.kind != 4) continue;
      const std::string source = testing::ReadFile(testing::SourceDir() / "tests" / "evaluators" / "adversarial" /
                                                   (std::string(attack.file) + ".cpp"));
      const Candidate candidate{source, {}, cpu->Toolchain(), cpu->Flags()};
      const BuildResult build = cpu->Build(candidate);
      if (!build.ok) continue;
      Profile profile;
      world.watchdog->Begin();
      cpu->AddProfileSources(candidate, build, profile);
      world.watchdog->End();
      ++profiled;
      if (profile.counters) ++simulated;
      const std::string file = attack.file;
      const std::string ran = file + (profile.counters ? ": simulated" : ": not simulated");
      MESSAGE(ran);
      // What the profile says is quoted to an LLM and stored: it must hold no secret either.
      Measurement as_quoted;
      as_quoted.log = ProfileDigest(profile);
      INFO(file << ":\n" << as_quoted.log);
      for (const auto& problem : world.Canaries(as_quoted)) CHECK_MESSAGE(false, file << ": " << problem);
    }
    CHECK(profiled >= 10);
    MESSAGE(simulated << " of " << profiled << " attacks ran to their end under cachegrind");
  }

  TEST_CASE("a kernel that leaves a mark in the arena a kept supervisor reuses finds none the next time") {
    // The gallery's evaluator keeps its supervisor from kernel to kernel
    // (evaluators/runner_pool.h): the candidates' arena is reused. The kernel
    // marks every page of it as its worker exits, and answers wrong when a
    // later run of it finds another process's mark: zeroed between jobs, it
    // is measured every time, at its honest speed.
    World& world = Shared();
    const std::string source =
        testing::ReadFile(testing::SourceDir() / "tests" / "evaluators" / "adversarial" / "k_marks_kept_arena.cpp");
    const Candidate candidate{source, {}, world.evaluator->Toolchain(), world.evaluator->Flags()};
    for (int run = 0; run < 3; ++run) {
      CAPTURE(run);
      const Measurement m = world.evaluator->Evaluate(candidate);
      INFO(Describe(m) << "\n" << m.log);
      CHECK(m.outcome == Outcome::kMeasured);
      // From the second run on, in the arena its first run marked.
      if (run > 0) CHECK(Contains(m.log, "kept from the last job, the candidate's arena cleared"));
      CHECK(m.speedup < 2.0);
    }
  }

  TEST_CASE("a kernel that slows the kept reference's samples leaves the next kernel's sampling as it was") {
    // The kept supervisor sizes the next job's reference samples by the
    // reference's seconds per call in the last job. The kernel would compete
    // for the CPU with the reference's samples from a timer while it is
    // idle: the timer is refused (one thread has no other way to run between
    // its calls), and the honest kernel after it finds its reference's
    // samples sized as its own (the two do the same work).
    World& world = Shared();
    const Measurement attacked = world.Eval("adversarial/k_slows_kept_reference");
    INFO("attacker: " << Describe(attacked) << "\n" << attacked.log);
    CHECK(attacked.outcome == Outcome::kRejected);
    CHECK(Contains(attacked.reason, "sandbox:"));
    const Measurement next = world.Eval("kernels/scale_ref");
    INFO("next: " << Describe(next) << "\n" << next.log);
    REQUIRE(next.outcome == Outcome::kMeasured);
    CHECK(Contains(next.log, "the reference's worker kept"));
    REQUIRE(next.shapes.size() == 1);
    const ShapeTiming& timing = next.shapes[0];
    CAPTURE(timing.candidate_calls_per_sample);
    CAPTURE(timing.reference_calls_per_sample);
    CHECK(timing.candidate_calls_per_sample < 2 * timing.reference_calls_per_sample);
    CHECK(next.speedup > 0.5);
    CHECK(next.speedup < 2.0);
    for (const auto& problem : world.Canaries(next)) CHECK_MESSAGE(false, problem);
  }

  TEST_CASE("a kernel that replies before its deferred calls are done, with one thread, is caught") {
    // The kernel hooks the worker's write() and read() through its GOT: it
    // returns at once from a third of each run's calls, and the hook sends
    // the worker's 'D' before it computes them, keeping that work under the
    // idle slack. Calls of about a millisecond (n = 4e6) and samples of a
    // few calls, as a real task's are: unfrozen after its 'D', the deferred
    // work ran beside the reference's sample and was done by the re-check,
    // and the kernel was measured in 4 of 6 evaluations (once 1.10x against
    // the honest kernel's 1.01x). Frozen, it is held with its deferred calls
    // unwritten, and the re-check finds them.
    World& world = Shared();
    CpuEvaluatorOptions options = testing::FastOptions();
    testing::TempDir work;
    options.work_dir = work.path();
    options.measure.min_time_s = 0.2;
    options.measure.min_samples = 10;
    Task task = testing::MakeScaleTask();
    task.shapes = {{{"n", 4000000}}};
    auto made = MakeCpuEvaluator(task, options);
    REQUIRE(made);
    Evaluator& evaluator = **made;
    const auto eval = [&](const std::string& file, const std::string& prefix = "") {
      const std::string source = testing::ReadFile(testing::SourceDir() / "tests" / "evaluators" / (file + ".cpp"));
      return evaluator.Evaluate(Candidate{prefix + source, {}, evaluator.Toolchain(), evaluator.Flags()});
    };
    const Measurement honest = eval("kernels/scale_ref");
    INFO("the honest kernel: " << Describe(honest) << "\n" << honest.log);
    CHECK(honest.outcome == Outcome::kMeasured);
    CHECK(Contains(honest.log, "frozen after each of"));
    for (int round = 0; round < 3; ++round) {
      const Measurement m = eval("adversarial/x_replies_before_deferred_calls");
      MESSAGE("x_replies_before_deferred_calls: " << Describe(m) << " (the honest kernel: " << Describe(honest) << ")");
      INFO(m.log);
      CHECK((m.outcome == Outcome::kWrong || m.outcome == Outcome::kRejected));
      for (const auto& problem : world.Canaries(m)) CHECK_MESSAGE(false, problem);
    }
    // The same hook, deferring the middle half of each run's last call
    // after writing its edges: the frozen look at that call's outputs reads
    // 16 places drawn afresh besides the edges, and finds its poison on the
    // first sample. With the edges alone it was caught later, in 3 of 3, by
    // a re-check that happened to pick that call ("outputs produced while
    // timing differ").
    for (int round = 0; round < 3; ++round) {
      const Measurement m = eval("adversarial/x_replies_before_deferred_calls", "#define LEAVE_LAST_MIDDLE 1\n");
      MESSAGE("x_replies_before_deferred_calls, the last call's middle: " << Describe(m));
      INFO(m.log);
      CHECK(m.outcome == Outcome::kWrong);
      CHECK_MESSAGE(Contains(m.reason, "of its last timed call"), m.reason);
      for (const auto& problem : world.Canaries(m)) CHECK_MESSAGE(false, problem);
    }
    // The hook again, hiding only what the one-thread idle slack (2 ms + 2%)
    // lets through: 1.5 ms + 0.5% of its time since its first call. Frozen,
    // it is caught; where a loaded machine lets it finish before the freeze,
    // it hid a millisecond or two of a job's ~220 ms: measured, it gains
    // nothing past the noise.
    for (int round = 0; round < 3; ++round) {
      const Measurement m = eval("adversarial/x_replies_before_deferred_calls",
                                 "#define DEFER_BUDGET_S 0.0015\n#define DEFER_BUDGET_SHARE 0.005\n");
      MESSAGE("x_replies_before_deferred_calls under the one-thread slack: " << Describe(m));
      INFO(m.log);
      CHECK((m.outcome == Outcome::kWrong || m.outcome == Outcome::kRejected ||
             (m.outcome == Outcome::kMeasured && m.speedup < kHonestSlack * honest.speedup)));
      for (const auto& problem : world.Canaries(m)) CHECK_MESSAGE(false, problem);
    }
  }

  TEST_CASE("a GEMM that recomputes only what changed since its last call is timed at its honest speed") {
    // x_patches_changed_rows keeps each call slot's last a, b and c, and
    // recomputes only the rows of c whose row of a changed and the columns
    // whose column of b did: the honest i-p-j sums to the bit, in
    // O(mk + kn + mn) for O(mnk). With 8 elements of each input drawn afresh
    // before each round, it was measured at 5.4 times its honest twin's
    // speed (kernels/matmul_ipj: 22.2x against 4.09x). The reference's call
    // costs hundreds of draws per input element, so most or all of them are
    // drawn afresh (runner/fresh_inputs.h), and it patches nothing.
    World& world = Shared();
    auto task = LoadTask(testing::TasksDir() / "matmul");
    REQUIRE_MESSAGE(task.has_value(), testing::ErrorOf(task));
    task->shapes = {{{"m", 256}, {"n", 256}, {"k", 256}}};
    testing::TempDir work;
    const CpuEvaluatorOptions options = PatchCaseOptions(work);
    auto made = MakeCpuEvaluator(*task, options);
    REQUIRE_MESSAGE(made.has_value(), testing::ErrorOf(made));
    Evaluator& evaluator = **made;
    const auto eval = [&](const std::string& file) {
      const std::string source = testing::ReadFile(testing::SourceDir() / "tests" / "evaluators" / (file + ".cpp"));
      return evaluator.Evaluate(Candidate{source, {}, evaluator.Toolchain(), evaluator.Flags()});
    };
    const Measurement honest = eval("kernels/matmul_ipj");
    INFO("the honest kernel: " << Describe(honest) << "\n" << honest.log);
    REQUIRE(honest.outcome == Outcome::kMeasured);
    // The share of each call's input elements drawn afresh: tens of
    // percent at least (all of them when the reference is not pressed by a
    // much faster candidate), so that every row of a and column of b changes.
    CHECK(FreshShare(honest.log) >= 20);
    const Measurement patcher = eval("adversarial/x_patches_changed_rows");
    // The honest kernel again: the same i-p-j loop ran at 5.9 ms a call in
    // most worker processes and at 10.4 ms in about one of four (where its
    // rows of b and c meet at the same offset in a 4 KiB page, as the
    // regions' addresses fall); its faster run is the twin's speed.
    const Measurement again = eval("kernels/matmul_ipj");
    REQUIRE(again.outcome == Outcome::kMeasured);
    const double twin = std::max(honest.speedup, again.speedup);
    MESSAGE("x_patches_changed_rows: " << Describe(patcher) << " (the honest kernel: " << Describe(honest) << ", "
                                       << Describe(again) << ")");
    INFO(patcher.log);
    // Whatever else it ends in, it is never measured faster than its twin
    // by more than the machine's noise (it was 5.4 times as fast).
    if (patcher.outcome == Outcome::kMeasured) CHECK(patcher.speedup < 2 * twin);
    // Fewer for the attacker, whose warm-up (the same slots, called again)
    // it answers from its copies: its samples hold more calls, and the
    // reference's budget is shared by more slots. Still a few in every
    // row of 256 elements.
    CHECK(FreshShare(patcher.log) >= 3);
    for (const auto& problem : world.Canaries(patcher)) CHECK_MESSAGE(false, problem);
  }

  TEST_CASE("with threads allowed, a GEMM that crowds the memory while the fresh draws are timed gains nothing") {
    // x_patches_changed_rows with CROWD_FRESH_TIMING: a thread of its own
    // writes all over 64 MiB in the gaps after its calls where the
    // supervisor prepares a shape's rounds, among them the timing of draws
    // at random positions that sets the share drawn afresh
    // (FreshInputs::TimeScattered). Those look dearer, the share smaller,
    // and more rows stay as they were. The timing counts at most 8 times the
    // cost of a draw in order (taken in a scratch buffer before), and the
    // bursts must stay within the CPU time allowed while idle.
    auto task = LoadTask(testing::TasksDir() / "matmul");
    REQUIRE_MESSAGE(task.has_value(), testing::ErrorOf(task));
    task->shapes = {{{"m", 256}, {"n", 256}, {"k", 256}}};
    task->baseline.reset();  // OpenBLAS's own threads would keep running after its calls
    testing::TempDir work;
    CpuEvaluatorOptions options = PatchCaseOptions(work);
    options.threads = 2;
    auto made = MakeCpuEvaluator(*task, options);
    REQUIRE_MESSAGE(made.has_value(), testing::ErrorOf(made));
    Evaluator& evaluator = **made;
    const auto eval = [&](const std::string& file, const std::string& prefix = "") {
      const std::string source =
          prefix + testing::ReadFile(testing::SourceDir() / "tests" / "evaluators" / (file + ".cpp"));
      return evaluator.Evaluate(Candidate{source, {}, evaluator.Toolchain(), evaluator.Flags()});
    };
    // Its twin once: its slow worker processes (the other case) run at
    // about 0.6 of its speed, still within the factor of 2 below.
    const Measurement honest = eval("kernels/matmul_ipj");
    REQUIRE(honest.outcome == Outcome::kMeasured);
    const Measurement crowder = eval("adversarial/x_patches_changed_rows", "#define CROWD_FRESH_TIMING 1\n");
    MESSAGE("x_patches_changed_rows crowding the fresh draws' timing: "
            << Describe(crowder) << ", " << FreshShare(crowder.log) << "% drawn afresh (the honest kernel: "
            << Describe(honest) << ", " << FreshShare(honest.log) << "%)");
    INFO(crowder.log);
    // Rejected for its CPU time while idle (its bursts and its polling for
    // the next gap: 39-44 ms in 2 of 5 runs), or measured at its twin's
    // speed: the share it drew without the thread (8.7-11%) shrank to
    // 6.6-7.7%, still about 18 elements in every row of 256; the cap
    // would keep it above an eighth of the share without the crowding.
    const bool caught = crowder.outcome == Outcome::kRejected && Contains(crowder.reason, "kept running");
    CHECK((caught || crowder.outcome == Outcome::kMeasured));
    if (crowder.outcome == Outcome::kMeasured) {
      CHECK(crowder.speedup < 2 * honest.speedup);
      CHECK(FreshShare(crowder.log) >= 1);
    }
  }

  TEST_CASE("a kernel that appends to the remarks its build left cannot put words in its profile") {
    // GCC writes the vectorization remarks into the build folder; the
    // profile reads them after the kernel ran, measured and under
    // cachegrind (where only the denylist stands). The kernel appends a
    // forged remark wherever it finds its build folder.
    World& world = Shared();
    auto* cpu = dynamic_cast<CpuEvaluator*>(world.evaluator.get());
    REQUIRE(cpu != nullptr);
    const std::string source =
        testing::ReadFile(testing::SourceDir() / "tests" / "evaluators" / "adversarial" / "p_forges_remarks.cpp");
    const Candidate candidate{source, {}, cpu->Toolchain(), cpu->Flags()};
    const BuildResult build = cpu->Build(candidate);
    REQUIRE_MESSAGE(build.ok, build.log);
    const fs::path remarks = build.library.parent_path() / "remarks.txt";
    REQUIRE(fs::exists(remarks));
    const std::string written = testing::ReadFile(remarks);
    const Measurement m = cpu->Measure(candidate, build);
    INFO(Describe(m) << "\n" << m.log);
    Profile profile;
    cpu->AddProfileSources(candidate, build, profile);
    const std::string digest = ProfileDigest(profile);
    INFO(digest);
    CHECK(testing::ReadFile(remarks) == written);
    REQUIRE(profile.remarks);
    CHECK_FALSE(Contains(digest, "kestrel-forged-remark"));
    // The attack ran to its end under cachegrind (the allowlist may stop it
    // earlier when measured): it tried, and found nothing to write.
    CHECK(profile.counters.has_value());
  }

  TEST_CASE("under cachegrind the kernel's calls meet kestrel-confine's denylist: a new namespace is refused") {
    // Bubblewrap alone lets a process make a nested user namespace; this
    // kernel aborts when it can (or any other denied call works), so its
    // profile is taken only under the filter.
    World& world = Shared();
    auto* cpu = dynamic_cast<CpuEvaluator*>(world.evaluator.get());
    REQUIRE(cpu != nullptr);
    const std::string source =
        testing::ReadFile(testing::SourceDir() / "tests" / "evaluators" / "adversarial" / "x_escapes_under_profiler.cpp");
    const Candidate candidate{source, {}, cpu->Toolchain(), cpu->Flags()};
    const BuildResult build = cpu->Build(candidate);
    REQUIRE_MESSAGE(build.ok, build.log);
    Profile profile;
    cpu->AddProfileSources(candidate, build, profile);
    std::string unavailable;
    for (const auto& why : profile.unavailable) unavailable += why + "\n";
    CHECK_MESSAGE(profile.counters.has_value(), unavailable);
  }

  TEST_CASE("with threads allowed, a kernel whose work goes on after its call returned is caught") {
    // Threads are refused by the seccomp allowlist when the evaluator runs
    // one thread; with two, the supervisor's own checks must catch these:
    // the kernel's CPU time while idle, and its outputs checked with the
    // worker frozen from the end of each sample (a thread still finishing
    // the answer leaves some poisoned).
    CpuEvaluatorOptions options = testing::FastOptions();
    options.threads = 2;
    auto made = MakeCpuEvaluator(testing::MakeScaleTask(), options);
    REQUIRE_MESSAGE(made.has_value(), testing::ErrorOf(made));
    Evaluator& threaded = **made;
    const std::string honest = testing::ReadFile(testing::SourceDir() / "tests" / "evaluators" / "kernels" / "scale_ref.cpp");
    const Measurement fair = threaded.Evaluate(Candidate{honest, {}, threaded.Toolchain(), threaded.Flags()});
    REQUIRE(fair.outcome == Outcome::kMeasured);
    for (const char* file : {"x_background_spinner", "x_replies_early", "x_spins_between_calls",
                             "x_pool_defers_middle", "x_cancels_freeze", "x_calls_restart_syscall",
                             "x_voids_slow_rounds", "x_works_in_the_pause"}) {
      const std::string source =
          testing::ReadFile(testing::SourceDir() / "tests" / "evaluators" / "adversarial" / (std::string(file) + ".cpp"));
      const Measurement m = threaded.Evaluate(Candidate{source, {}, threaded.Toolchain(), threaded.Flags()});
      MESSAGE(std::string(file) << " with 2 threads: " << Describe(m) << " (the honest kernel: " << Describe(fair)
                                << ")");
      INFO(m.log);
      const bool caught =
          (m.outcome == Outcome::kRejected && Contains(m.reason, "kept running")) || m.outcome == Outcome::kWrong;
      if (std::string(file) == "x_voids_slow_rounds") {
        // Its slow samples (two in three), made to look disturbed by its own
        // thread, are not dropped: it is measured at its slow samples'
        // speed, well under the honest kernel's (counting the worker's wait
        // with threads, its slow rounds were dropped and it measured 0.99x
        // against the honest kernel's 0.88x).
        REQUIRE(m.outcome == Outcome::kMeasured);
        CHECK(m.speedup < 0.8 * fair.speedup);
      } else if (std::string(file) == "x_calls_restart_syscall") {
        // Nothing to resume: honest, and measured as such.
        CHECK(m.outcome == Outcome::kMeasured);
        CHECK(m.speedup < std::max(2.0, 1.5 * fair.speedup));
      } else if (std::string(file) == "x_cancels_freeze" || std::string(file) == "x_spins_between_calls" ||
                 std::string(file) == "x_works_in_the_pause") {
        // x_cancels_freeze: a freeze it cancels is not waited for past a
        // second, and it is rejected; one that held checked honest work.
        // x_spins_between_calls spins only while the reference's samples run,
        // to slow them; frozen then, it takes nothing from them. Each is
        // caught, or measured no faster than the honest kernel beyond the
        // machine's noise (its work is the honest kernel's; its own thread
        // slows it). x_works_in_the_pause computes a sample's slots while the
        // supervisor prepares them and pauses before the call: the watch on
        // its CPU time while idle catches it, or bounds what it does there.
        CHECK((caught || (m.outcome == Outcome::kMeasured && m.speedup < std::max(2.0, 1.5 * fair.speedup))));
      } else {
        CHECK(caught);
      }
    }
  }
}

}  // namespace
}  // namespace kestrel
