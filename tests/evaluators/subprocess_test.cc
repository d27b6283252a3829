#include "evaluators/subprocess.h"

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <thread>
#include <vector>

#include <doctest.h>

#include "testing.h"

namespace kestrel {
namespace {

SubprocessResult Sh(const std::string& script, double timeout_s = 10, bool result_pipe = false) {
  SubprocessOptions options;
  options.argv = {"/bin/sh", "-c", script};
  options.timeout_s = timeout_s;
  options.result_pipe = result_pipe;
  auto run = RunSubprocess(options);
  REQUIRE(run.has_value());
  return *run;
}

// True while `pid` exists and is not a zombie.
bool Alive(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] != 'Z';
}

TEST_SUITE("subprocess") {
  TEST_CASE("exit code and output") {
    const auto run = Sh("echo out; echo err >&2; exit 3");
    CHECK(run.exit_code == 3);
    CHECK(run.signal == 0);
    CHECK_FALSE(run.timed_out);
    CHECK_FALSE(run.Succeeded());
    CHECK(run.log.find("out") != std::string::npos);
    CHECK(run.log.find("err") != std::string::npos);
    CHECK(run.Describe(0) == "exited with status 3");
    CHECK(Sh("true").Succeeded());
  }

  TEST_CASE("a signal is reported by name") {
    const auto run = Sh("kill -SEGV $$");
    CHECK(run.signal == SIGSEGV);
    CHECK(run.Describe(0) == "killed by SIGSEGV");
  }

  TEST_CASE("the result pipe is fd 3 and separate from the log") {
    const auto run = Sh("echo logged; printf result >&3", 10, true);
    CHECK(run.result == "result");
    CHECK(run.log == "logged\n");
    // Without the pipe, fd 3 is closed in the child.
    CHECK(Sh("printf x >&3").exit_code != 0);
  }

  TEST_CASE("a timeout kills the whole process group, grandchildren included") {
    testing::TempDir dir;
    const auto pid_file = dir / "grandchild.pid";
    const auto start = std::chrono::steady_clock::now();
    const auto run = Sh("sleep 60 & echo $! > " + pid_file.string() + "; wait", 0.5);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(run.timed_out);
    CHECK(run.signal == SIGKILL);
    CHECK(seconds < 5);
    CHECK(run.Describe(0.5) == "timed out after 0.5s (wall-clock limit)");
    const int grandchild = std::stoi(testing::ReadFile(pid_file));
    for (int i = 0; i < 100 && Alive(grandchild); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK_FALSE(Alive(grandchild));
  }

  TEST_CASE("a background process left behind does not hold the parent") {
    const auto start = std::chrono::steady_clock::now();
    const auto run = Sh("sleep 30 & echo started", 20);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(run.exit_code == 0);
    CHECK(seconds < 5);
  }

  TEST_CASE("limits, environment and working directory") {
    testing::TempDir dir;
    SubprocessOptions options;
    options.argv = {"/bin/sh", "-c", "pwd; echo $KESTREL_TEST_VAR; ulimit -c; head -c 2000000 /dev/zero > big"};
    options.env = EnvironmentWith({"KESTREL_TEST_VAR=hello"});
    options.cwd = dir.path();
    options.file_size_limit_bytes = 1000000;
    auto run = RunSubprocess(options);
    REQUIRE(run.has_value());
    CHECK(run->log.find(dir.path().string()) != std::string::npos);
    CHECK(run->log.find("hello\n0\n") != std::string::npos);
    CHECK_FALSE(run->Succeeded());  // SIGXFSZ or a write error past the file size limit
  }

  TEST_CASE("the CPU-time limit is SIGXCPU, and SIGKILL a second later for a program that ignores it") {
    SubprocessOptions options;
    options.argv = {"/bin/sh", "-c", "while :; do :; done"};
    options.cpu_limit_s = 1;
    options.timeout_s = 30;
    auto spin = RunSubprocess(options);
    REQUIRE(spin.has_value());
    CHECK(spin->signal == SIGXCPU);
    CHECK_FALSE(spin->timed_out);
    options.argv = {"/bin/sh", "-c", "trap '' XCPU; while :; do :; done"};
    auto ignores = RunSubprocess(options);
    REQUIRE(ignores.has_value());
    CHECK(ignores->signal == SIGKILL);
    CHECK_FALSE(ignores->timed_out);
    CHECK(ignores->wall_seconds < 20);
  }

  TEST_CASE("a long log keeps its head and tail") {
    SubprocessOptions options;
    options.argv = {"/bin/sh", "-c", "echo first; head -c 1000000 /dev/zero | tr '\\0' x; echo; echo last"};
    options.log_limit_bytes = 4096;
    auto run = RunSubprocess(options);
    REQUIRE(run.has_value());
    CHECK(run->log.size() < 5000);
    CHECK(run->log.rfind("first", 0) == 0);
    CHECK(run->log.find("bytes omitted") != std::string::npos);
    CHECK(run->log.find("last") != std::string::npos);
  }

  TEST_CASE("a missing program is an error, not a result") {
    SubprocessOptions options;
    options.argv = {"/no/such/program"};
    CHECK_FALSE(RunSubprocess(options).has_value());
    options.argv = {"no-such-program-in-path-xyz"};
    CHECK_FALSE(RunSubprocess(options).has_value());
    CHECK(FindProgram("sh").has_value());
  }

  TEST_CASE("runs concurrently from several threads") {
    std::vector<std::thread> threads;
    std::vector<int> codes(8, -1);
    std::vector<std::string> results(8);
    for (int i = 0; i < 8; ++i) {
      threads.emplace_back([i, &codes, &results] {
        SubprocessOptions options;
        options.argv = {"/bin/sh", "-c", "sleep 0.1; printf " + std::to_string(i) + " >&3; exit " + std::to_string(i)};
        options.result_pipe = true;
        auto run = RunSubprocess(options);
        if (run) {
          codes[i] = run->exit_code;
          results[i] = run->result;
        }
      });
    }
    for (auto& thread : threads) thread.join();
    for (int i = 0; i < 8; ++i) {
      CHECK(codes[i] == i);
      CHECK(results[i] == std::to_string(i));
    }
  }

  TEST_CASE("no child is left behind, not even a zombie") {
    Sh("exit 1");
    Sh("sleep 60", 0.2);
    Sh("kill -KILL $$");
    int status = 0;
    CHECK(::waitpid(-1, &status, WNOHANG) == -1);
    CHECK(errno == ECHILD);
  }
}

}  // namespace
}  // namespace kestrel
