// kestrel resume and kestrel doctor, on the real binary: a run killed with
// SIGKILL at several moments and resumed each time finishes its budget with
// no recorded node lost, no identity evaluated twice and an intact database.

#include <doctest.h>

#include <algorithm>
#include <signal.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_workspace.h"
#include "store/store.h"
#include "testing.h"

using namespace kestrel;
using namespace std::chrono_literals;
using nlohmann::json;
using testing::Exec;
using testing::Process;
using testing::Workspace;

namespace {

json ParseJson(const Exec& exec) {
  INFO("stdout: " << exec.out << "\nstderr: " << exec.err);
  REQUIRE(exec.code == 0);
  return json::parse(exec.out);
}

// Waits until the newest run has recorded at least `evaluations` results.
bool WaitForEvaluations(Workspace& workspace, std::int64_t evaluations, const Process& process) {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (Workspace::Poll(process)) return false;  // finished (or died) on its own
    const Exec read = workspace.Run({"runs", "--json"});
    if (read.code == 0) {
      try {
        const json runs = json::parse(read.out);
        if (!runs.empty() && runs[0].at("evaluations").get<std::int64_t>() >= evaluations) return true;
      } catch (const json::exception&) {
      }
    }
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

}  // namespace

TEST_SUITE("cli resume") {
  TEST_CASE("a run killed with SIGKILL five times and resumed each time finishes its budget exactly") {
    Workspace workspace;
    constexpr int kBudget = 20;
    Process run = workspace.Spawn({"run", "--task", "affine_wide", "--max-evals", std::to_string(kBudget), "--quiet",
                                   "--min-time", "0.01"});
    for (int kill_number = 1; kill_number <= 5; ++kill_number) {
      // Kill at a different moment each time: after 0, 3, 6, ... results.
      const bool running = WaitForEvaluations(workspace, (kill_number - 1) * 3, run);
      if (running) {
        REQUIRE(kill(run.pid, SIGKILL) == 0);
        const Exec killed = Workspace::Wait(run);
        CHECK(killed.code != 0);
      } else {
        Workspace::Wait(run);
      }
      run = workspace.Spawn({"resume", "--quiet"});
    }
    const Exec last = Workspace::Wait(run);
    INFO("stderr: " << last.err);
    REQUIRE(last.code == 0);

    const json runs = ParseJson(workspace.Run({"runs", "--json"}));
    REQUIRE(runs.size() == 1);  // resume continues the same run
    CHECK(runs[0].at("status") == "finished");
    CHECK(runs[0].at("stop_reason") == "evaluations");
    CHECK(runs[0].at("evaluations") == kBudget);

    auto store = Store::Open(workspace.db(), Store::Mode::kReadOnly);
    REQUIRE_MESSAGE(store.has_value(), testing::ErrorOf(store));
    auto intact = (*store)->IntegrityOk();
    REQUIRE(intact.has_value());
    CHECK(*intact);
    auto nodes = (*store)->LoadNodes(runs[0].at("graph").get<std::int64_t>());
    REQUIRE(nodes.has_value());
    std::set<std::string> identities;
    int measurements = 0;
    for (const NodeRecord& node : *nodes) {
      CHECK(identities.insert(node.identity).second);  // no identity twice
      CHECK(IsFinal(node.status));                     // nothing left in flight
      auto recorded = (*store)->GetMeasurements(node.id);
      REQUIRE(recorded.has_value());
      // Evaluated exactly once; confirmation rounds re-measure, and say so.
      const auto evaluations = std::count_if(recorded->begin(), recorded->end(),
                                             [](const MeasurementRecord& record) { return record.purpose == "search"; });
      CHECK(evaluations == 1);
      measurements += static_cast<int>(evaluations);
    }
    CHECK(measurements == kBudget);
  }

  TEST_CASE("resume extends a finished run's budget, and says so when nothing is unfinished") {
    Workspace workspace;
    const Exec first = workspace.Run({"run", "--task", "affine", "--max-evals", "2", "--quiet", "--min-time", "0.01"});
    REQUIRE(first.code == 0);
    const Exec nothing = workspace.Run({"resume"});
    CHECK(nothing.code == 1);
    CHECK(nothing.err.find("no unfinished run") != std::string::npos);
    // A finished run goes on only for the budget that stopped it: --time
    // alone stopped again at once ("the evaluation budget is spent"), exit 0.
    // Without an extension the session stops at once, as the run did.
    const Exec plain = workspace.Run({"resume", "--run", "1", "--quiet", "--json"});
    CHECK_MESSAGE(plain.code == 0, plain.err);
    CHECK(ParseJson(plain).at("evaluations") == 0);
    const Exec timed = workspace.Run({"resume", "--run", "1", "--time", "20s", "--quiet"});
    CHECK(timed.code == 2);
    CHECK_MESSAGE(timed.err.find("give --max-evals to extend it") != std::string::npos, timed.err);

    const Exec more = workspace.Run({"resume", "--run", "1", "--max-evals", "2", "--quiet", "--json"});
    const json summary = ParseJson(more);
    CHECK(summary.at("evaluations") == 2);  // this session's results
    const json runs = ParseJson(workspace.Run({"runs", "--json"}));
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].at("evaluations") == 4);
    CHECK(runs[0].at("status") == "finished");

    const Exec missing = workspace.Run({"--db", (workspace.path() / "none.db").string(), "resume"}, false);
    CHECK(missing.code == 1);
    CHECK(missing.err.find("no database") != std::string::npos);
  }

  TEST_CASE("doctor reports the compiler, runner, sandbox, tasks and whether a GPU was found") {
    Workspace workspace;
    const json checks = ParseJson(workspace.Run({"doctor", "--json"}));
    std::set<std::string> names;
    for (const json& check : checks) {
      names.insert(check.at("check").get<std::string>());
      if (check.at("check") == "compiler" || check.at("check") == "runner" || check.at("check") == "tasks") {
        CHECK_MESSAGE(check.at("state") == "ok", check.dump());
      }
      if (check.at("check") == "cuda") {
        // A GPU is found (ok), or its absence is a warning that says so; never a failure.
        const std::string detail = check.at("detail");
        CHECK_MESSAGE((check.at("state") == "ok" ? detail.find("GPU(s)") : detail.find("GPU")) != std::string::npos,
                      detail);
      }
      CHECK(check.at("state") != "fail");
    }
    // The sandbox has a line per layer (evaluators/sandbox.h), each ok on this
    // machine; each profile source a line (docs/PROFILES.md).
    CHECK(names == std::set<std::string>{"compiler", "runner", "sandbox: process", "sandbox: namespaces",
                                         "sandbox: capabilities", "sandbox: file system", "sandbox: environment",
                                         "sandbox: seccomp", "sandbox: limits", "profile: pmu", "profile: cachegrind",
                                         "profile: objdump", "profile: compiler remarks", "profile: ncu", "graphviz",
                                         "tasks", "database", "host", "cuda"});
  }
}
