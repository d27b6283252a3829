// The command evaluator's run step in its sandbox (evaluators/command_sandbox.h):
// a real bubblewrap around a real shell that tries, as a harness holding an
// LLM's kernel could, to reach what it must not — a canary file, a SQLite
// database, a secret in Kestrel's environment, a bystander process, a
// listening socket on loopback, the task's folder for writing — and uses what
// it may: the task and build folders, its work dir, and what the config
// binds and passes.

#include "evaluators/command_sandbox.h"

#include <netinet/in.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <sstream>

#include <doctest.h>

#include "evaluators/sandbox.h"
#include "evaluators/subprocess.h"
#include "testing.h"

namespace kestrel {
namespace {

namespace fs = std::filesystem;

// The lines "NAME=value" a probe script printed, as a map.
std::map<std::string, std::string> Lines(const std::string& log) {
  std::map<std::string, std::string> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (const auto equals = line.find('='); equals != std::string::npos) out[line.substr(0, equals)] = line.substr(equals + 1);
  }
  return out;
}

struct Bystander {
  pid_t pid = ::fork();
  Bystander() {
    if (pid == 0) {
      ::execl("/bin/sleep", "sleep", "120", static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~Bystander() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  bool Alive() const { return ::kill(pid, 0) == 0; }
};

// A TCP socket listening on loopback; its port.
struct Listener {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int port = 0;
  Listener() {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(fd, 4) == 0);
    socklen_t length = sizeof address;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
    port = ntohs(address.sin_port);
  }
  ~Listener() { ::close(fd); }
};

TEST_SUITE("command_sandbox") {
  TEST_CASE("the run command sees its task, its build and its work dir, and nothing else of the machine") {
    REQUIRE_MESSAGE(DetectSandbox().bwrap, "bubblewrap is required (scripts/setup installs it): "
                                               << DetectSandbox().bwrap_why);
    testing::TempDir root;
    const fs::path task = root / "task", build = root / "build", work = root / "work", canary = root / "kestrel-canary";
    const fs::path extra = root / "extra";
    for (const auto& dir : {task, build, work, canary, extra}) fs::create_directories(dir);
    testing::WriteFile(task / "reference.c", "reference");
    testing::WriteFile(build / "kernel.c", "candidate");
    testing::WriteFile(extra / "tool.txt", "bound");
    testing::WriteFile(canary / "secret.txt", "canary-content-7f3a");
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open((canary / "kestrel.db").c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "PRAGMA journal_mode=WAL; CREATE TABLE t(x); INSERT INTO t VALUES (42);", nullptr, nullptr,
                         nullptr) == SQLITE_OK);
    ::setenv("KESTREL_CANARY_SECRET", "sk-canary-0001", 1);
    ::setenv("KESTREL_PASSED", "passed-value", 1);
    Bystander bystander;
    Listener listener;

    CommandSandboxConfig config;
    config.binds = {extra.string()};
    config.pass_env = {"KESTREL_PASSED"};
    auto sandbox = CommandSandbox::Make(config, work);
    REQUIRE_MESSAGE(sandbox.has_value(), testing::ErrorOf(sandbox));
    CHECK(sandbox->Confined());
    CHECK(sandbox->Gap().empty());
    CHECK(sandbox->Summary().find("bwrap") != std::string::npos);
    CHECK(sandbox->Summary().find("seccomp denylist") != std::string::npos);

    const std::string script =
        "probe() { if eval \"$2\" >/dev/null 2>&1; then echo \"$1=yes\"; else echo \"$1=no\"; fi; }\n"
        "probe read_task 'cat " + (task / "reference.c").string() + "'\n"
        "probe read_build 'cat " + (build / "kernel.c").string() + "'\n"
        "probe read_bound 'cat " + (extra / "tool.txt").string() + "'\n"
        "probe write_work 'echo x > " + (work / "answer.json").string() + "'\n"
        "probe write_task 'echo x > " + (task / "planted").string() + "'\n"
        "probe write_build 'echo x > " + (build / "kernel.c").string() + "'\n"
        "probe read_canary 'cat " + (canary / "secret.txt").string() + "'\n"
        "probe see_database 'test -e " + (canary / "kestrel.db").string() + "'\n"
        "probe write_canary 'echo x > " + (canary / "planted").string() + "'\n"
        "probe signal_bystander 'kill -0 " + std::to_string(bystander.pid) + "'\n"
        "probe kill_bystander 'kill -9 " + std::to_string(bystander.pid) + "'\n"
        "probe connect_loopback 'exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(listener.port) + "'\n"
        "probe read_parent_environ 'cat /proc/" + std::to_string(::getpid()) + "/environ'\n"
        "probe nested_namespace 'unshare -U true'\n"
        "echo secret=${KESTREL_CANARY_SECRET-unset}\n"
        "echo passed=${KESTREL_PASSED-unset}\n"
        "echo uid=$(id -u)\n"
        "echo pwd=$(pwd)\n"
        "echo processes=$(ls /proc | grep -c '^[0-9]')\n";
    SubprocessOptions run;
    run.argv = sandbox->Wrap({"bash", "-c", script}, task, build, work);
    run.timeout_s = 30;
    auto ran = RunSubprocess(run);
    REQUIRE_MESSAGE(ran.has_value(), testing::ErrorOf(ran));
    INFO(ran->log);
    REQUIRE(ran->Succeeded());
    const auto seen = Lines(ran->log);
    // What a harness needs.
    CHECK(seen.at("read_task") == "yes");
    CHECK(seen.at("read_build") == "yes");
    CHECK(seen.at("read_bound") == "yes");
    CHECK(seen.at("write_work") == "yes");
    CHECK(seen.at("pwd") == fs::absolute(work).string());
    CHECK(seen.at("passed") == "passed-value");
    // What it must not reach.
    CHECK(seen.at("write_task") == "no");
    CHECK(seen.at("write_build") == "no");
    CHECK(seen.at("read_canary") == "no");
    CHECK(seen.at("see_database") == "no");
    CHECK(seen.at("write_canary") == "no");
    CHECK(seen.at("signal_bystander") == "no");
    CHECK(seen.at("kill_bystander") == "no");
    CHECK(seen.at("connect_loopback") == "no");
    CHECK(seen.at("read_parent_environ") == "no");
    CHECK(seen.at("nested_namespace") == "no");  // the seccomp denylist (bubblewrap alone allows it)
    CHECK(seen.at("secret") == "unset");
    CHECK(seen.at("uid") == "65534");
    CHECK(std::stoi(seen.at("processes")) <= 8);  // bwrap's init, bash, its pipeline: none of the machine's
    CHECK(ran->log.find("canary-content-7f3a") == std::string::npos);
    // And outside, everything as it was.
    CHECK(bystander.Alive());
    CHECK(testing::ReadFile(build / "kernel.c") == "candidate");
    CHECK_FALSE(fs::exists(task / "planted"));
    CHECK_FALSE(fs::exists(canary / "planted"));
    CHECK(testing::ReadFile(work / "answer.json") == "x\n");
    sqlite3_stmt* statement = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, "SELECT x FROM t", -1, &statement, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_step(statement) == SQLITE_ROW);
    CHECK(sqlite3_column_int(statement, 0) == 42);
    sqlite3_finalize(statement);
    sqlite3_close(db);
    ::unsetenv("KESTREL_CANARY_SECRET");
    ::unsetenv("KESTREL_PASSED");
  }

  TEST_CASE("a harness named by its path elsewhere is visible, read-only") {
    REQUIRE(DetectSandbox().bwrap);
    testing::TempDir root;
    const fs::path task = root / "task", build = root / "build", work = root / "work", tools = root / "tools";
    for (const auto& dir : {task, build, work, tools}) fs::create_directories(dir);
    testing::WriteFile(tools / "harness.sh", "echo ran > answer.json\necho x >> \"$0\" 2>/dev/null || echo read-only\n");
    auto sandbox = CommandSandbox::Make({}, work);
    REQUIRE(sandbox.has_value());
    SubprocessOptions run;
    run.argv = sandbox->Wrap({"bash", (tools / "harness.sh").string()}, task, build, work);
    run.timeout_s = 30;
    auto ran = RunSubprocess(run);
    REQUIRE(ran.has_value());
    INFO(ran->log);
    CHECK(ran->Succeeded());
    CHECK(ran->log.find("read-only") != std::string::npos);
    CHECK(testing::ReadFile(work / "answer.json") == "ran\n");
  }

  TEST_CASE("without bubblewrap the run command is not confined, and the evaluator says why") {
    testing::TempDir root;  // a scratch dir of its own: DetectSandbox probes again
    const std::string path = std::getenv("PATH");
    ::setenv("PATH", (root / "empty-bin").c_str(), 1);
    auto sandbox = CommandSandbox::Make({}, root.path());
    ::setenv("PATH", path.c_str(), 1);
    REQUIRE(sandbox.has_value());
    CHECK_FALSE(sandbox->Confined());
    CHECK_FALSE(sandbox->Unconfined());  // not by choice: a run with LLM kernels is refused (SandboxGap)
    CHECK_MESSAGE(sandbox->Gap().find("bwrap not found") != std::string::npos, sandbox->Gap());
    CHECK(sandbox->Summary().find("INCOMPLETE") != std::string::npos);
    CHECK(sandbox->Wrap({"true"}, root.path(), root.path(), root.path()) == std::vector<std::string>{"true"});
  }

  TEST_CASE("a bad sandbox config is refused naming its field; \"none\" leaves the command as it is") {
    testing::TempDir root;
    CommandSandboxConfig relative;
    relative.binds = {"venv"};
    auto refused = CommandSandbox::Make(relative, root.path());
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message().find("evaluator.binds[0]") != std::string::npos);
    CommandSandboxConfig missing;
    missing.binds = {(root / "no-such-folder").string()};
    CHECK_FALSE(CommandSandbox::Make(missing, root.path()).has_value());
    CommandSandboxConfig device;
    device.devices = {"/etc/passwd"};
    refused = CommandSandbox::Make(device, root.path());
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message().find("evaluator.devices[0]") != std::string::npos);
    device.devices = {"/dev/../etc/passwd"};
    CHECK_FALSE(CommandSandbox::Make(device, root.path()).has_value());

    CommandSandboxConfig none;
    none.mode = "none";
    auto open = CommandSandbox::Make(none, root.path());
    REQUIRE(open.has_value());
    CHECK(open->Unconfined());
    CHECK_FALSE(open->Confined());
    CHECK(open->Gap().empty());
    CHECK(open->Wrap({"true"}, root.path(), root.path(), root.path()) == std::vector<std::string>{"true"});
    CHECK(open->Summary().find("NONE") != std::string::npos);
  }
}

}  // namespace
}  // namespace kestrel
