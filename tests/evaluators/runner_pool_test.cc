// Supervisors kept for a run (evaluators/runner_pool.h, kestrel-runner
// --serve): a stand-in server written in bash for how the pool treats a
// server that answers, retires, dies, hangs or answers garbage; and the real
// evaluator for what the kept supervisor keeps (the reference's worker and
// the regions), what it must not (one candidate's leftovers for the next),
// and a supervisor killed in the middle of a job.

#include "evaluators/runner_pool.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <doctest.h>

#include "evaluators/evaluator.h"
#include "scale_task.h"
#include "tests/testing.h"

namespace kestrel {
namespace {

// Answers each request by a word in its job's text; writes the job's log.
constexpr char kStandIn[] = R"sh(while IFS= read -r line; do
  dir=$(printf '%s' "$line" | sed -n 's/.*"dir":"\([^"]*\)".*/\1/p')
  printf 'job log: %s\n' "$line" > "$dir/runner.log"
  case "$line" in
    *die*) exit 3 ;;
    *hang*) sleep 100 ;;
    *garbage*) echo 'not an answer' >&3 ;;
    *retire*) echo '{"result":"retired","retire":true}' >&3 ;;
    *) echo '{"result":"answered","retire":false}' >&3 ;;
  esac
done
)sh";

struct StandIn {
  testing::TempDir dir;
  RunnerPool pool{dir / "servers"};
  StandIn() { testing::WriteFile(dir / "serve.sh", kStandIn); }
  SubprocessResult Run(const std::string& job, double timeout_s = 20) {
    SubprocessOptions options;
    options.argv = {"bash", (dir / "serve.sh").string()};
    options.cwd = dir.path();
    options.stdin_data = job;
    options.timeout_s = timeout_s;
    auto ran = pool.Run(options);
    REQUIRE_MESSAGE(ran.has_value(), testing::ErrorOf(ran));
    return *ran;
  }
};

// The kept supervisors (kestrel-runner --serve) among this process's children.
std::vector<pid_t> KeptSupervisors() {
  std::vector<pid_t> found;
  DIR* proc = ::opendir("/proc");
  while (dirent* entry = proc != nullptr ? ::readdir(proc) : nullptr) {
    const pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (pid <= 0) continue;
    std::ifstream stat("/proc/" + std::string(entry->d_name) + "/stat");
    std::string skip, state;
    pid_t parent = 0;
    std::string comm;
    stat >> skip >> comm >> state >> parent;
    if (parent != ::getpid()) continue;
    const std::string cmdline = testing::ReadFile("/proc/" + std::string(entry->d_name) + "/cmdline");
    if (cmdline.find("--serve") != std::string::npos) found.push_back(pid);
  }
  if (proc != nullptr) ::closedir(proc);
  return found;
}

TEST_SUITE("runner_pool") {
  TEST_CASE("a server that answers is kept for the next job, and the job's log comes back") {
    StandIn stand_in;
    const SubprocessResult first = stand_in.Run("job one");
    CHECK(first.Succeeded());
    CHECK(first.result == "answered");
    CHECK(first.log.find("job log:") != std::string::npos);
    CHECK(first.log.find("job one") != std::string::npos);
    const SubprocessResult second = stand_in.Run("job two");
    CHECK(second.result == "answered");
    CHECK(second.log.find("job two") != std::string::npos);
    CHECK(stand_in.pool.started() == 1);
  }

  TEST_CASE("a server that retires, dies, hangs or answers garbage is not used again") {
    StandIn stand_in;
    CHECK(stand_in.Run("please retire").result == "retired");
    CHECK(stand_in.Run("then answer").result == "answered");
    CHECK(stand_in.pool.started() == 2);

    const SubprocessResult died = stand_in.Run("die now");
    CHECK_FALSE(died.Succeeded());
    CHECK(died.exit_code == 3);
    CHECK(died.result.empty());
    CHECK(stand_in.Run("a job after the exit").result == "answered");
    CHECK(stand_in.pool.started() == 3);

    const auto start = std::chrono::steady_clock::now();
    const SubprocessResult hung = stand_in.Run("hang here", 0.5);
    CHECK(hung.timed_out);
    CHECK(hung.signal == SIGKILL);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
    CHECK(stand_in.Run("a job after the timeout").result == "answered");
    CHECK(stand_in.pool.started() == 4);

    const SubprocessResult garbage = stand_in.Run("garbage please");
    CHECK_FALSE(garbage.Succeeded());
    CHECK(garbage.result.empty());
    CHECK(garbage.log.find("protocol violation") != std::string::npos);
    CHECK(stand_in.Run("a job after the bad answer").result == "answered");
    CHECK(stand_in.pool.started() == 5);
  }

  TEST_CASE("a server killed while idle is not given the next job") {
    StandIn stand_in;
    CHECK(stand_in.Run("job one").result == "answered");
    const std::vector<pid_t> kept = KeptSupervisors();
    REQUIRE(kept.size() == 1);
    ::kill(kept[0], SIGKILL);
    // Dead (a zombie: the pool has not reaped it) before the next job.
    const auto state = [pid = kept[0]] {
      const std::string stat = testing::ReadFile("/proc/" + std::to_string(pid) + "/stat");
      const std::size_t end = stat.rfind(')');
      return end == std::string::npos || end + 2 >= stat.size() ? '?' : stat[end + 2];
    };
    for (int i = 0; i < 500 && state() != 'Z'; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(state() == 'Z');
    const SubprocessResult next = stand_in.Run("job two");
    CHECK(next.Succeeded());
    CHECK(next.result == "answered");
    CHECK(stand_in.pool.started() == 2);
  }

  TEST_CASE("a kept supervisor keeps the reference's worker and the regions, and clears the candidate's arena") {
    auto made = MakeCpuEvaluator(testing::MakeScaleTask(), testing::FastOptions());
    REQUIRE_MESSAGE(made.has_value(), testing::ErrorOf(made));
    Evaluator& evaluator = **made;
    // The kernel looks for another candidate's mark in its arena, and
    // leaves its own when its worker exits: found, it answers wrong.
    const Candidate marker{
        testing::ReadFile(testing::SourceDir() / "tests" / "evaluators" / "adversarial" / "k_marks_kept_arena.cpp"),
        {}, evaluator.Toolchain(), evaluator.Flags()};
    REQUIRE(evaluator.Evaluate(testing::MakeCandidate(evaluator, "scale_ref")).outcome == Outcome::kMeasured);
    for (int round = 0; round < 3; ++round) {
      CAPTURE(round);
      const Measurement m = evaluator.Evaluate(marker);
      INFO(ToString(m.outcome) << ": " << m.reason << "\n" << m.log);
      CHECK(m.outcome == Outcome::kMeasured);
      // The arena it ran in was the last job's: the clearing is what is tested.
      CHECK(m.log.find("kept from the last job, the candidate's arena cleared") != std::string::npos);
      CHECK(m.log.find("the reference's worker kept") != std::string::npos);
      // Its seconds per call on the one timed shape: the last job's.
      CHECK(m.log.find("known from the last job on 1 of 1 shapes") != std::string::npos);
      REQUIRE(m.shapes.size() == 1);
      CHECK(m.shapes[0].reference.count >= 5);
      // The two kernels do the same work, so their samples hold about as
      // many calls: a stall in the candidate's warm-up once made its
      // estimate 2.3 ms for a 30 us call, its samples one call each, and
      // the control channel's round trips half its time: 0.37-0.49x of the
      // same work (runner/call_estimate.h). Within a factor of 4, not 2: the
      // reference's estimate is the last job's, and a busy CI machine once
      // ran this job's candidate at 69 us a call against 53 us, its samples
      // 16 calls against the reference's 32.
      const ShapeTiming& timing = m.shapes[0];
      CAPTURE(timing.candidate_calls_per_sample);
      CAPTURE(timing.reference_calls_per_sample);
      CHECK(4 * timing.candidate_calls_per_sample > timing.reference_calls_per_sample);
      CHECK(timing.candidate_calls_per_sample < 4 * timing.reference_calls_per_sample);
      CHECK(m.speedup > 0.5);
      CHECK(m.speedup < 2.0);
    }
    CHECK(KeptSupervisors().size() == 1);
  }

  TEST_CASE("a kept reference's worker is replaced before its CPU time meets the limit it inherited") {
    // A reference that computes much per element, so that its CPU time, not
    // the supervisor's, runs up: RLIMIT_CPU is run_timeout_s + 5 s = 9 s,
    // and the worker is replaced past a quarter of it (0.5 s or more of its
    // samples a job), in the same supervisor.
    const std::string spin = R"(#include <cstdint>
void scale_add(const float* x, float* y, int64_t n, float a) {
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i];
    for (int k = 0; k < 2000; ++k) v = v * 0.999f + 0.001f;
    y[i] = a * x[i] + 1.0f + 0.0f * v;
  }
}
)";
    Task task = testing::MakeScaleTask();
    task.shapes = {{{"n", 2000}}};
    task.reference = {"spin_ref.cpp", spin};
    CpuEvaluatorOptions options = testing::FastOptions();
    options.measure.run_timeout_s = 4;
    options.measure.min_time_s = 0.5;
    auto made = MakeCpuEvaluator(task, options);
    REQUIRE_MESSAGE(made.has_value(), testing::ErrorOf(made));
    Evaluator& evaluator = **made;
    const Candidate candidate{spin, {}, evaluator.Toolchain(), evaluator.Flags()};
    int kept = 0, replaced = 0;
    for (int job = 0; job < 10 && replaced == 0; ++job) {
      const Measurement m = evaluator.Evaluate(candidate);
      INFO(ToString(m.outcome) << ": " << m.reason << "\n" << m.log);
      REQUIRE(m.outcome == Outcome::kMeasured);
      if (m.log.find("the reference's worker kept") != std::string::npos) ++kept;
      // A new reference's worker and regions in the supervisor that kept
      // the candidates' arena.
      if (m.log.find("made, the candidate's arena kept and cleared") != std::string::npos) {
        CHECK(m.log.find("workers started") != std::string::npos);
        ++replaced;
      }
    }
    CHECK(kept >= 2);
    CHECK(replaced == 1);
  }

  TEST_CASE("a supervisor killed in the middle of a job: the candidate's result says so, and the next gets a fresh one") {
    auto made = MakeCpuEvaluator(testing::MakeScaleTask(), testing::FastOptions());
    REQUIRE_MESSAGE(made.has_value(), testing::ErrorOf(made));
    Evaluator& evaluator = **made;
    const Candidate looping = testing::MakeCandidate(evaluator, "scale_infinite_loop");
    const BuildResult build = evaluator.Build(looping);
    REQUIRE(build.ok);
    const std::vector<pid_t> kept = KeptSupervisors();
    REQUIRE(kept.size() == 1);
    std::thread killer([pid = kept[0]] {
      std::this_thread::sleep_for(std::chrono::milliseconds(800));
      ::kill(pid, SIGKILL);
    });
    const Measurement killed = evaluator.Measure(looping, build);
    killer.join();
    INFO(ToString(killed.outcome) << ": " << killed.reason << "\n" << killed.log);
    CHECK(killed.outcome == Outcome::kCrashed);
    CHECK(killed.reason.find("killed by SIGKILL") != std::string::npos);
    const Measurement after = evaluator.Evaluate(testing::MakeCandidate(evaluator, "scale_ref"));
    INFO(after.log);
    CHECK(after.outcome == Outcome::kMeasured);
    const std::vector<pid_t> now = KeptSupervisors();
    REQUIRE(now.size() == 1);
    CHECK(now[0] != kept[0]);
  }
}

}  // namespace
}  // namespace kestrel
