// A run in progress through the built binary (CONTRACT.md, "Commands"):
// readers beside it, SIGINT stopping it. Apart from cli_test because nothing
// here depends on how fast a kernel runs: it shares the machine with the other
// tests that time nothing (tests/meson.build).

#include <doctest.h>
#include <signal.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_json.h"
#include "cli_workspace.h"
#include "store/store.h"

using namespace kestrel;
using namespace std::chrono_literals;
using nlohmann::json;

using testing::Contains;
using testing::Exec;
using testing::ParseJson;
using testing::Process;
using testing::Workspace;

namespace {

// Polls `kestrel runs --json` until the newest run is running with at least
// `evaluations` evaluations; false when `process` exits first or after 30 s.
bool WaitForRun(Workspace& workspace, int evaluations, const Process& process) {
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto exited = Workspace::Poll(process)) {
      FAIL("the run exited early with " << exited->code << ": " << exited->err);
      return false;
    }
    const Exec read = workspace.Run({"runs", "--json"});
    if (read.code == 0) {
      try {
        const json runs = json::parse(read.out);
        if (!runs.empty() && runs[0].at("status") == "running" && runs[0].at("evaluations") >= evaluations) return true;
      } catch (const json::exception&) {
      }
    }
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

// Waits until `process` has printed `text` (stdout or stderr); false when it
// exits first or after 60 s.
bool WaitForOutput(const Process& process, const std::string& text) {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (Contains(testing::ReadFile(process.out) + testing::ReadFile(process.err), text)) return true;
    if (Workspace::Poll(process)) return false;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

}  // namespace

TEST_SUITE("cli") {
  TEST_CASE("a SIGINT or a SIGKILL during the final confirmation: the resumed run confirms") {
    // The first SIGINT once went unheard there (the run had stopped for its
    // budget): the confirmation went on and the run ended finished, exit 0.
    // A run killed there was never confirmed: its resume saw "nothing new".
    Workspace workspace;
    const Process run = workspace.Spawn({"run", "--task", "affine_wide", "--max-evals", "3", "--min-time", "0.05"});
    REQUIRE(WaitForOutput(run, "confirming the top"));
    REQUIRE(kill(run.pid, SIGINT) == 0);
    const Exec stopped = Workspace::Wait(run);
    INFO("stderr: " << stopped.err);
    CHECK(stopped.code == 130);
    CHECK(ParseJson(workspace.Run({"runs", "--json"}))[0].at("status") == "interrupted");
    const Exec resumed = workspace.Run({"resume", "--run", "1"});
    CHECK_MESSAGE(resumed.code == 0, resumed.err);
    CHECK(Contains(resumed.out + resumed.err, "confirming the top"));
    CHECK(ParseJson(workspace.Run({"runs", "--json"}))[0].at("status") == "finished");

    const Process killed =
        workspace.Spawn({"run", "--task", "affine_wide", "--max-evals", "3", "--min-time", "0.05", "--fresh"});
    REQUIRE(WaitForOutput(killed, "confirming the top"));
    REQUIRE(kill(killed.pid, SIGKILL) == 0);
    CHECK(Workspace::Wait(killed).code != 0);
    const Exec after = workspace.Run({"resume", "--run", "2"});
    CHECK_MESSAGE(after.code == 0, after.err);
    CHECK(Contains(after.out + after.err, "confirming the top"));
  }

  TEST_CASE("readers work while a run writes") {
    Workspace workspace;
    const Process writer = workspace.Spawn(
        {"run", "--task", "affine_wide", "--max-evals", "40", "--min-time", "0.01", "--quiet", "--json"});
    REQUIRE(WaitForRun(workspace, 0, writer));
    int reads = 0, reads_while_running = 0, seen_running = 0;
    std::optional<Exec> finished;
    while (reads < 10 || !finished) {
      if (!finished) finished = Workspace::Poll(writer);
      for (const char* command : {"runs", "best"}) {
        CAPTURE(command);
        const Exec read = workspace.Run({command, "--json"});
        INFO("stderr: " << read.err);
        REQUIRE(read.code == 0);
        const json document = ParseJson(read);
        CHECK(document.is_array());
        if (std::string(command) == "runs" && !document.empty() && document[0].at("status") == "running") {
          ++seen_running;
        }
      }
      ++reads;
      if (!finished) ++reads_while_running;
      REQUIRE(reads < 2000);
      std::this_thread::sleep_for(100ms);  // leave the two cores to the writer
    }
    INFO("writer stderr: " << finished->err);
    CHECK(finished->code == 0);
    CHECK(reads_while_running >= 3);
    CHECK(seen_running >= 1);
    const json summary = ParseJson(*finished);
    CHECK(summary.at("evaluations") == 40);
    CHECK(summary.at("stop_reason") == "evaluations");
    const json runs = ParseJson(workspace.Run({"runs", "--json"}));
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].at("status") == "finished");
    CHECK(runs[0].at("evaluations") == 40);
  }

  TEST_CASE("SIGINT stops a run: exit 130, the run recorded as interrupted, the database intact") {
    Workspace workspace;
    const Process run = workspace.Spawn({"run", "--task", "affine_wide", "--time", "10m", "--min-time", "0.01"});
    REQUIRE(WaitForRun(workspace, 1, run));
    REQUIRE(kill(run.pid, SIGINT) == 0);
    const Exec stopped = Workspace::Wait(run);
    INFO("stderr: " << stopped.err);
    CHECK(stopped.code == 130);
    CHECK(Contains(stopped.err, "stopping"));
    const json runs = ParseJson(workspace.Run({"runs", "--json"}));
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].at("status") == "interrupted");
    CHECK(runs[0].at("stop_reason") == "signal");
    CHECK(runs[0].at("evaluations").get<int>() >= 1);
    CHECK(runs[0].at("evaluations").get<int>() < 48);
    auto store = Store::Open(workspace.db(), Store::Mode::kReadOnly);
    REQUIRE_MESSAGE(store.has_value(), testing::ErrorOf(store));
    auto intact = (*store)->IntegrityOk();
    REQUIRE(intact.has_value());
    CHECK(*intact);
    // Every node the run created reached a final status: nothing was left in flight.
    auto runs_list = (*store)->ListRuns();
    REQUIRE(runs_list.has_value());
    auto nodes = (*store)->LoadNodes(runs_list->at(0).graph_id);
    REQUIRE(nodes.has_value());
    for (const NodeRecord& node : *nodes) CHECK(IsFinal(node.status));
  }
  TEST_CASE("a second SIGINT exits at once with 130 and leaves a readable database") {
    Workspace workspace;
    const Process run = workspace.Spawn({"run", "--task", "affine_wide", "--time", "10m", "--min-time", "0.01"});
    REQUIRE(WaitForRun(workspace, 1, run));
    REQUIRE(kill(run.pid, SIGINT) == 0);
    std::this_thread::sleep_for(20ms);
    REQUIRE(kill(run.pid, SIGINT) == 0);
    const Exec stopped = Workspace::Wait(run);
    INFO("stderr: " << stopped.err);
    CHECK(stopped.code == 130);
    auto store = Store::Open(workspace.db(), Store::Mode::kReadOnly);
    REQUIRE_MESSAGE(store.has_value(), testing::ErrorOf(store));
    auto intact = (*store)->IntegrityOk();
    REQUIRE(intact.has_value());
    CHECK(*intact);
    const Exec runs = workspace.Run({"runs", "--json"});
    CHECK(runs.code == 0);
    CHECK(ParseJson(runs).size() == 1);
  }

  TEST_CASE("one search per graph: a second run of the task and a resume of the running run are refused") {
    Workspace workspace;
    const Process run = workspace.Spawn({"run", "--task", "affine_wide", "--time", "10m", "--min-time", "0.01"});
    REQUIRE(WaitForRun(workspace, 1, run));
    const Exec second = workspace.Run({"run", "--task", "affine_wide", "--max-evals", "1", "--quiet"});
    CHECK(second.code == 1);
    CHECK(Contains(second.err, "being searched by another kestrel process"));
    CHECK(Contains(second.err, "--fresh"));
    const Exec resumed = workspace.Run({"resume", "--max-evals", "1", "--quiet"});
    CHECK(resumed.code == 1);
    CHECK(Contains(resumed.err, "run 1 (task affine_wide) is running in another kestrel process"));
    CHECK(ParseJson(workspace.Run({"runs", "--json"})).size() == 1);  // the refused run made no run
    CHECK(ParseJson(workspace.Run({"runs", "--json"}))[0].at("alive") == true);
    // A SIGKILLed run leaves no lock behind: it resumes at once. `runs`
    // says it is gone (it showed "running" for ever).
    REQUIRE(kill(run.pid, SIGKILL) == 0);
    CHECK(Workspace::Wait(run).code != 0);
    CHECK(ParseJson(workspace.Run({"runs", "--json"}))[0].at("alive") == false);
    CHECK(Contains(workspace.Run({"runs"}).out, "killed (kestrel resume)"));
    const Exec after = workspace.Run({"resume", "--run", "1", "--max-evals", "1", "--quiet"});
    INFO("stderr: " << after.err);
    CHECK(after.code == 0);
  }
}
