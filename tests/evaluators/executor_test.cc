// The Executor seam (evaluators/executor.h): the local executor, and the
// Slurm executor against a fake SlurmClient — the job script it submits and
// how each way a job can end maps onto a SubprocessResult — without Slurm.

#include "evaluators/executor.h"

#include <signal.h>
#include <sys/stat.h>

#include <mutex>
#include <optional>
#include <thread>

#include <doctest.h>

#include "core/stop.h"
#include "evaluators/slurm_executor.h"
#include "testing.h"

namespace kestrel {
namespace {

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A cluster that "runs" each job at submission: it writes the job's output
// file and result file, then reports `states` in turn (the last one repeats).
class FakeSlurm final : public SlurmClient {
 public:
  std::vector<SlurmJobState> states = {{"COMPLETED", "0:0", "node1", "00:00:01", "None"}};
  std::string output = "job output\n";
  std::optional<std::string> result;   // written to <stem>.result when set
  std::optional<std::string> refusal;  // sbatch refuses the job with this output
  bool unstartable = false;            // sbatch cannot be started

  Result<SlurmSubmission> Submit(const std::vector<std::string>& options, const std::string& script,
                                 const std::filesystem::path& dir) const override {
    std::lock_guard lock(mutex_);
    ++submissions_;
    submitted_options_ = options;
    submitted_script_ = script;
    if (unstartable) return Fail(Error::NotFound("sbatch not found in $PATH"));
    if (refusal) return SlurmSubmission{"", *refusal};
    const std::string stem = Option("--job-name=kestrel-");
    testing::WriteFile(Option("--output="), output);
    if (result) testing::WriteFile(dir / (stem + ".result"), *result);
    return SlurmSubmission{"42", "42\n"};
  }
  std::optional<SlurmJobState> Show(const std::string& job_id) const override {
    std::lock_guard lock(mutex_);
    CHECK(job_id == "42");
    const std::size_t at = std::min(shows_++, states.size() - 1);
    return states[at];
  }
  void Cancel(const std::string& job_id) const override {
    std::lock_guard lock(mutex_);
    cancelled_ = job_id;
  }

  std::string script() const { return submitted_script_; }
  const std::vector<std::string>& options() const { return submitted_options_; }
  std::size_t shows() const { return shows_; }
  int submissions() const { return submissions_; }
  std::string cancelled() const { return cancelled_; }

 private:
  std::string Option(const std::string& prefix) const {
    for (const auto& option : submitted_options_) {
      if (option.rfind(prefix, 0) == 0) return option.substr(prefix.size());
    }
    FAIL("no sbatch option " << prefix);
    return "";
  }

  mutable std::mutex mutex_;
  mutable std::vector<std::string> submitted_options_;
  mutable std::string submitted_script_;
  mutable std::size_t shows_ = 0;
  mutable int submissions_ = 0;
  mutable std::string cancelled_;
};

struct SlurmFixture {
  testing::TempDir dir;
  std::shared_ptr<FakeSlurm> cluster = std::make_shared<FakeSlurm>();
  SlurmOptions options{"kestrel", "", "5:00", {}, {"--exclusive"}, "1:00:00", 0.01};

  std::shared_ptr<const Executor> Make() {
    options.shared_dir = dir.path() / "shared";
    auto executor = MakeSlurmExecutor(options, cluster);
    REQUIRE_MESSAGE(executor.has_value(), testing::ErrorOf(executor));
    return *executor;
  }
  SubprocessOptions Process(double timeout_s = 30) const {
    SubprocessOptions process;
    process.argv = {"bench", "a b"};
    process.cwd = dir.path();
    process.timeout_s = timeout_s;
    return process;
  }
  SubprocessResult Run(const SubprocessOptions& process, const std::string& stem = "time") {
    auto ran = Make()->Run(process, stem);
    REQUIRE_MESSAGE(ran.has_value(), testing::ErrorOf(ran));
    return *ran;
  }
  // A job that ended in `state` with scontrol's ExitCode `exit_code`.
  SubprocessResult Ended(const std::string& state, const std::string& exit_code, const std::string& run_time = "00:00:01",
                         const std::string& reason = "None") {
    cluster->states = {{state, exit_code, "node1", run_time, reason}};
    return Run(Process());
  }
};

TEST_SUITE("executor") {
  TEST_CASE("the local executor is RunSubprocess: stdin, fd 3 and the exit status") {
    const auto local = LocalExecutor();
    CHECK(local->RunsHere());
    SubprocessOptions process;
    process.argv = {"sh", "-c", "cat >&3; exit 3"};
    process.stdin_data = "the job";
    process.result_pipe = true;
    auto ran = local->Run(process, "ignored");
    REQUIRE(ran.has_value());
    CHECK(ran->result == "the job");
    CHECK(ran->exit_code == 3);
    CHECK(ran->job.empty());

    testing::TempDir dir;
    auto work_dir = PrepareWorkDir(dir.path() / "kept", *local, "kestrel-test");
    REQUIRE(work_dir.has_value());
    CHECK_FALSE(work_dir->owned);
    CHECK(std::filesystem::is_directory(dir.path() / "kept"));
  }

  TEST_CASE("a Slurm job is the program wrapped in its limits, with its stdin and fd 3 in files") {
    SlurmFixture slurm;
    slurm.cluster->result = "the result";
    SubprocessOptions process = slurm.Process(30);
    process.cpu_limit_s = 1.5;
    process.memory_limit_bytes = 1 << 20;
    process.file_size_limit_bytes = 4096;
    process.result_pipe = true;
    process.stdin_data = "{\"mode\": \"time\"}";
    process.env = EnvironmentWith({"KESTREL_EXECUTOR_PROBE=it's set"});
    const SubprocessResult ran = slurm.Run(process, "time");
    CHECK(ran.Succeeded());
    CHECK(ran.result == "the result");
    CHECK(ran.log == "job output\n");
    CHECK(ran.job == "Slurm job 42 on node1");

    const auto in = slurm.dir.path() / "time.in";
    CHECK(testing::ReadFile(in) == process.stdin_data);
    struct stat info {};
    REQUIRE(::stat(in.c_str(), &info) == 0);
    CHECK((info.st_mode & 0777) == 0600);  // the job (and its nonce) for the job's owner only
    CHECK(slurm.cluster->script() ==
          "exec 'prlimit' '--core=0' '--cpu=2:3' '--as=1048576' '--fsize=4096' '--' 'timeout' '--kill-after=2' '30' "
          "'env' 'KESTREL_EXECUTOR_PROBE=it'\\''s set' 'bench' 'a b' <'" + in.string() + "' 3>'" +
              (slurm.dir.path() / "time.result").string() + "'");
    const std::vector<std::string> expected = {
        "--job-name=kestrel-time", "--chdir=" + slurm.dir.path().string(),
        "--output=" + (slurm.dir.path() / "time.out").string(), "--time=5:00", "--partition=kestrel", "--exclusive"};
    CHECK(slurm.cluster->options() == expected);
  }

  TEST_CASE("how a job ended maps onto RunSubprocess's result") {
    SlurmFixture slurm;
    SUBCASE("COMPLETED and FAILED: the program's exit status and signal") {
      CHECK(slurm.Ended("COMPLETED", "0:0").Succeeded());
      const SubprocessResult failed = slurm.Ended("FAILED", "3:0");
      CHECK(failed.exit_code == 3);
      CHECK_FALSE(failed.timed_out);
      CHECK(failed.lost.empty());
      const SubprocessResult segv = slurm.Ended("FAILED", "0:11");
      CHECK(segv.signal == SIGSEGV);
      CHECK(segv.Describe(30) == "killed by SIGSEGV");
    }
    SUBCASE("timeout's exit 124, or SIGKILL at the wall-clock limit: timed out") {
      const SubprocessResult timed_out = slurm.Ended("FAILED", "124:0");
      CHECK(timed_out.timed_out);
      CHECK(timed_out.lost.empty());
      CHECK(timed_out.Describe(30) == "timed out after 30s (wall-clock limit)");
      CHECK(slurm.Ended("FAILED", "0:9", "00:00:30").timed_out);
      const SubprocessResult killed_early = slurm.Ended("FAILED", "0:9", "00:00:05");
      CHECK_FALSE(killed_early.timed_out);
      CHECK(killed_early.signal == SIGKILL);
    }
    SUBCASE("Slurm's TIMEOUT, or COMPLETING for its time limit: timed out by Slurm") {
      for (const auto& [state, reason] : {std::pair{"TIMEOUT", "TimeLimit"}, std::pair{"COMPLETING", "TimeLimit"}}) {
        CAPTURE(state);
        const SubprocessResult ran = slurm.Ended(state, "0:15", "00:05:00", reason);
        CHECK(ran.timed_out);
        CHECK(ran.lost == "Slurm job 42 on node1 hit its time limit (5:00)");
      }
    }
    SUBCASE("a job Slurm ended itself is lost, saying how; one the cluster lost is submitted three times") {
      const SubprocessResult cancelled = slurm.Ended("CANCELLED", "0:15");
      CHECK(cancelled.lost == "Slurm job 42 on node1 was cancelled (submitted 3 times)");
      CHECK(slurm.cluster->submissions() == 3);
      CHECK(Contains(cancelled.log, "kestrel: Slurm job 42 on node1 was cancelled; submitted again\n"));
      for (const char* state : {"NODE_FAIL", "BOOT_FAIL", "PREEMPTED"}) {
        CHECK(slurm.Ended(state, "0:0").lost == "Slurm job 42 on node1 ended " + std::string(state) + " (submitted 3 times)");
      }
      CHECK(slurm.cluster->submissions() == 12);
      // The program's own fault is not submitted again.
      CHECK(slurm.Ended("OUT_OF_MEMORY", "0:125").lost ==
            "Slurm job 42 on node1 ran out of memory (Slurm's limit for the job)");
      CHECK(slurm.Ended("FAILED", "0:11").signal == SIGSEGV);
      CHECK(slurm.cluster->submissions() == 14);
      const SubprocessResult unknown = slurm.Ended("", "");
      CHECK(unknown.lost == "Slurm job 42 on node1 ended in an unknown state");
      CHECK_FALSE(unknown.Succeeded());
    }
    SUBCASE("a job is polled until its state is final") {
      slurm.cluster->states = {{"PENDING", "0:0", "", "00:00:00", "Priority"},
                               {"RUNNING", "0:0", "node1", "00:00:01", "None"},
                               {"COMPLETED", "0:0", "node1", "00:00:02", "None"}};
      CHECK(slurm.Run(slurm.Process()).Succeeded());
      CHECK(slurm.cluster->shows() == 3);
    }
  }

  TEST_CASE("a job that does not end within its timeout plus the time limit of starting is cancelled and lost") {
    SlurmFixture slurm;
    slurm.options.time_limit = "0:01";  // one second
    slurm.cluster->states = {{"RUNNING", "0:0", "node1", "00:00:00", "None"}};
    const SubprocessResult ran = slurm.Run(slurm.Process(0.5));
    CHECK(slurm.cluster->cancelled() == "42");
    CHECK_FALSE(ran.timed_out);
    CHECK(ran.lost == "Slurm job 42 on node1 did not end within 1.5 s of starting; it was cancelled");
    CHECK(slurm.cluster->submissions() == 1);
  }

  TEST_CASE("time in the queue counts for no limit of the program's; past queue_limit the job is cancelled") {
    SlurmFixture slurm;
    slurm.options.time_limit = "0:01";
    // About 2.3 s in the queue (polls 0.1, 0.2, 0.4, 0.8 s apart, then 1 s),
    // past the program's 1.5 s: it runs all the same.
    slurm.cluster->states = {{"PENDING", "0:0", "", "00:00:00", "Priority"},
                             {"PENDING", "0:0", "", "00:00:00", "Priority"},
                             {"PENDING", "0:0", "", "00:00:00", "Priority"},
                             {"CONFIGURING", "0:0", "", "00:00:00", "None"},
                             {"PENDING", "0:0", "", "00:00:00", "Resources"},
                             {"RUNNING", "0:0", "node1", "00:00:00", "None"},
                             {"COMPLETED", "0:0", "node1", "00:00:01", "None"}};
    CHECK(slurm.Run(slurm.Process(0.5)).Succeeded());
    CHECK(slurm.cluster->cancelled().empty());

    SlurmFixture queued;
    queued.options.queue_limit = "0:01";
    queued.cluster->states = {{"PENDING", "0:0", "", "00:00:00", "Resources"}};
    const SubprocessResult ran = queued.Run(queued.Process(30));
    CHECK(queued.cluster->cancelled() == "42");
    CHECK(ran.lost == "Slurm job 42 waited in the queue past executor.queue_limit (0:01, reason Resources); it was "
                      "cancelled");
    CHECK(queued.cluster->submissions() == 1);  // to the back of the queue again: not submitted again
  }

  TEST_CASE("at a stop, a job still queued is withdrawn and cancelled, none is submitted, and a running one is waited for") {
    ResetStop();
    SlurmFixture slurm;
    slurm.cluster->states = {{"PENDING", "0:0", "", "00:00:00", "Priority"}};
    std::thread stopper([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      RequestStop();
    });
    const SubprocessResult queued = slurm.Run(slurm.Process());
    stopper.join();
    CHECK(queued.withdrawn);
    CHECK(slurm.cluster->cancelled() == "42");
    CHECK(queued.lost == "Slurm job 42 was still queued when the run was stopped; it was cancelled");
    const SubprocessResult later = slurm.Run(slurm.Process());
    CHECK(later.withdrawn);
    CHECK(later.lost == "not submitted to Slurm: the run is stopping");
    CHECK(slurm.cluster->submissions() == 1);
    ResetStop();

    SlurmFixture running;
    running.cluster->states = {{"RUNNING", "0:0", "node1", "00:00:00", "None"},
                               {"RUNNING", "0:0", "node1", "00:00:00", "None"},
                               {"RUNNING", "0:0", "node1", "00:00:01", "None"},
                               {"COMPLETED", "0:0", "node1", "00:00:01", "None"}};
    std::thread stop_while_running([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      RequestStop();
    });
    const SubprocessResult finished = running.Run(running.Process());
    stop_while_running.join();
    ResetStop();
    CHECK(finished.Succeeded());
    CHECK_FALSE(finished.withdrawn);
    CHECK(running.cluster->cancelled().empty());
  }

  TEST_CASE("a job the cluster lost once is submitted again, and its log says so") {
    SlurmFixture slurm;
    slurm.cluster->states = {{"NODE_FAIL", "0:0", "node3", "00:00:01", "None"},
                             {"COMPLETED", "0:0", "node1", "00:00:01", "None"}};
    const SubprocessResult ran = slurm.Run(slurm.Process());
    CHECK(ran.Succeeded());
    CHECK(ran.lost.empty());
    CHECK(slurm.cluster->submissions() == 2);
    CHECK(Contains(ran.log, "kestrel: Slurm job 42 on node3 ended NODE_FAIL; submitted again\n"));
    CHECK(Contains(ran.log, "job output"));
  }

  TEST_CASE("sbatch: a refused job is lost with its message; one that cannot start is an error") {
    SlurmFixture slurm;
    slurm.cluster->refusal = "sbatch: error: invalid partition specified: kestrel\n";
    const SubprocessResult refused = slurm.Run(slurm.Process());
    CHECK_FALSE(refused.Succeeded());
    CHECK(refused.job.empty());
    CHECK(Contains(refused.lost, "sbatch could not submit the job: sbatch: error: invalid partition"));
    slurm.cluster->refusal.reset();
    slurm.cluster->unstartable = true;
    auto failed = slurm.Make()->Run(slurm.Process(), "time");
    REQUIRE_FALSE(failed.has_value());
    CHECK(Contains(failed.error().message(), "sbatch not found"));
  }

  TEST_CASE("the Slurm executor checks its options when made, and its work dirs live in the shared folder") {
    SlurmFixture slurm;
    const auto executor = slurm.Make();
    CHECK_FALSE(executor->RunsHere());
    auto work_dir = PrepareWorkDir({}, *executor, "kestrel-eval");
    REQUIRE(work_dir.has_value());
    CHECK(work_dir->owned);
    CHECK(work_dir->path.parent_path() == slurm.dir.path() / "shared");

    SlurmOptions bad_limit = slurm.options;
    bad_limit.time_limit = "ten";
    auto refused = MakeSlurmExecutor(bad_limit, slurm.cluster);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().IsInvalidArgument());
    CHECK(Contains(refused.error().message(), "executor.time_limit"));

    SlurmOptions no_dir = slurm.options;
    no_dir.shared_dir.clear();
    refused = MakeSlurmExecutor(no_dir, slurm.cluster);
    REQUIRE_FALSE(refused.has_value());
    CHECK(Contains(refused.error().message(), "executor.shared_dir"));
  }

  TEST_CASE("Slurm time limits and the shell line of a job") {
    CHECK(ParseSlurmTime("30").value() == 1800);
    CHECK(ParseSlurmTime("10:00").value() == 600);
    CHECK(ParseSlurmTime("1:02:03").value() == 3723);
    CHECK(ParseSlurmTime("2-0").value() == 2 * 86400);
    CHECK(ParseSlurmTime("1-12:30").value() == 86400 + 12 * 3600 + 30 * 60);
    CHECK(ParseSlurmTime("1-2:03:04").value() == 86400 + 2 * 3600 + 3 * 60 + 4);
    CHECK(ParseSlurmTime("0-5").value() == 5 * 3600);  // days given: hours next, even at zero days (was 5 minutes)
    // No limit, zero, and a field too long for a number (which threw out of
    // std::stod and aborted the run) are refused.
    for (const char* bad : {"", "ten", "1:2:3:4", "-1", "1--2", "5:", ":5", "1-", "0", "UNLIMITED", "INFINITE",
                            "0:00", "1234567890", "999999999999999999999999999999999999999999999999"}) {
      CAPTURE(std::string(bad));
      CHECK_FALSE(ParseSlurmTime(bad).has_value());
    }
    CHECK(ShellQuote({"bench", "a b", "it's", "{\"n\":1}"}) == R"('bench' 'a b' 'it'\''s' '{"n":1}')");
    CHECK(ShellQuote({""}) == "''");
    CHECK(ShellQuote({}).empty());
  }
}

}  // namespace
}  // namespace kestrel
