// kestrel suite run / resume / report on the real binary: a suite of small
// tasks runs one run per task, skips what its evaluator cannot run, reports
// one JSON document, and a suite killed with SIGKILL mid-way (and stopped by
// SIGINT) resumes and finishes every task exactly once.

#include <doctest.h>

#include <signal.h>

#include <chrono>
#include <map>
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
  return json::parse(exec.out);  // throws on anything after the one document
}

// Runs per task and their evaluations, from the runs table.
std::map<std::string, std::vector<json>> RunsByTask(Workspace& workspace) {
  std::map<std::string, std::vector<json>> by_task;
  for (const json& run : ParseJson(workspace.Run({"runs", "--json"}))) {
    by_task[run.at("task").get<std::string>()].push_back(run);
  }
  return by_task;
}

// Waits until the suite's run of `task` has recorded an evaluation.
bool WaitForRunOf(Workspace& workspace, const std::string& task, const Process& process) {
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (Workspace::Poll(process)) return false;
    const Exec read = workspace.Run({"runs", "--json"});
    if (read.code == 0) {
      try {
        for (const json& run : json::parse(read.out)) {
          if (run.at("task") == task && run.at("evaluations").get<int>() >= 1) return true;
        }
      } catch (const json::exception&) {
      }
    }
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

}  // namespace

TEST_SUITE("cli suite") {
  TEST_CASE("a suite of two level-1 tasks runs each once with its budget; a CUDA task is skipped; report --json is one document") {
    Workspace workspace;
    const Exec run = workspace.Run({"suite", "run", "--tasks", "triad,colsum,softmax_cuda", "--evals-per-task", "2",
                                    "--min-time", "0.01", "--quiet"});
    INFO("stdout: " << run.out << "\nstderr: " << run.err);
    REQUIRE(run.code == 0);
    CHECK(run.out.find("suite 1: 2 of 3 tasks done, 0 failed, 1 skipped") != std::string::npos);

    const auto runs = RunsByTask(workspace);
    REQUIRE(runs.size() == 2);
    for (const char* task : {"triad", "colsum"}) {
      REQUIRE(runs.at(task).size() == 1);
      CHECK(runs.at(task)[0].at("evaluations") == 2);
      CHECK(runs.at(task)[0].at("status") == "finished");
    }

    const json report = ParseJson(workspace.Run({"suite", "report", "--json"}));
    CHECK(report.at("suite") == 1);
    CHECK(report.at("state") == "done");
    CHECK(report.at("budget_per_task").at("evaluations") == 2);
    const json& tasks = report.at("tasks");
    REQUIRE(tasks.size() == 3);
    // Ordered by level, then name; the CUDA task is level 1 too, but this
    // config's evaluator (cpu) does not run it.
    CHECK(tasks[0].at("task") == "colsum");
    CHECK(tasks[1].at("task") == "softmax_cuda");
    CHECK(tasks[2].at("task") == "triad");
    CHECK(tasks[1].at("level") == 1);
    CHECK(tasks[1].at("state") == "skipped");
    CHECK(tasks[1].at("reason").get<std::string>().find("does not run cuda tasks") != std::string::npos);
    CHECK(tasks[1].at("run").is_null());
    for (int i : {0, 2}) {
      INFO(tasks[i].dump());
      CHECK(tasks[i].at("state") == "done");
      CHECK(tasks[i].at("correct") == true);  // the seed is a correct kernel
      CHECK(tasks[i].at("speedup").get<double>() > 0);
      CHECK(tasks[i].at("fast_p_reference").at("0") == true);
      CHECK(tasks[i].at("evaluations") == 2);
      CHECK(tasks[i].at("seconds_to_first_correct").get<double>() > 0);
      CHECK(tasks[i].at("evaluations_per_hour").get<double>() > 0);
      CHECK(tasks[i].at("llm_usd") == 0.0);
    }
    const json& level1 = report.at("levels").back();
    CHECK(level1.at("level") == 1);
    CHECK(level1.at("tasks") == 2);
    CHECK(level1.at("skipped") == 1);
    CHECK(level1.at("correct") == 2);
    CHECK(level1.at("pass_rate") == 1.0);
    CHECK(level1.at("fast_p_reference").at("0") == 1.0);
    CHECK(level1.at("geomean_speedup").get<double>() > 0);

    // The text report: a table per level and a summary line per level.
    const Exec text = workspace.Run({"suite", "report"});
    INFO(text.out);
    REQUIRE(text.code == 0);
    CHECK(text.out.find("level 1: 2 tasks (1 not run), pass 2/2") != std::string::npos);
    CHECK(text.out.find("no level") == std::string::npos);
    CHECK(text.out.find("colsum") != std::string::npos);

    const Exec missing = workspace.Run({"suite", "report", "--suite", "7"});
    CHECK(missing.code == 2);  // an id that names nothing is bad usage, as for nodes and runs
    CHECK(missing.err.find("no suite 7") != std::string::npos);
    const Exec missing_resume = workspace.Run({"suite", "resume", "--suite", "7"});
    CHECK(missing_resume.code == 2);
    CHECK(missing_resume.err.find("no suite 7") != std::string::npos);
    // An LLM config whose key is not in the environment: refused before a
    // suite is made (every task was recorded failed, the suite done, and
    // exit 0).
    const std::filesystem::path keyless = workspace.path() / "keyless.json";
    testing::WriteFile(keyless, R"({"mutators": [{"kind": "llm", "provider": "openai", "model": "gpt-4o",
        "base_url": "http://127.0.0.1:9", "api_key_env": "KESTREL_TEST_NO_SUCH_KEY"}]})");
    const Exec no_key = workspace.Run({"suite", "run", keyless.string(), "--tasks", "colsum", "--evals-per-task", "1"});
    CHECK(no_key.code == 2);
    CHECK_MESSAGE(no_key.err.find("mutators[0]: the API key's environment variable KESTREL_TEST_NO_SUCH_KEY") !=
                      std::string::npos,
                  no_key.err);
    const Exec still_one = workspace.Run({"suite", "report", "--json"});
    REQUIRE(still_one.code == 0);
    CHECK(json::parse(still_one.out).at("suite") == 1);
    const Exec unknown = workspace.Run({"suite", "run", "--tasks", "no_such_task", "--evals-per-task", "1"});
    CHECK(unknown.code == 2);
    CHECK(unknown.err.find("no task named 'no_such_task'") != std::string::npos);
    const Exec nothing = workspace.Run({"suite", "resume"});
    CHECK(nothing.code == 1);
    CHECK_MESSAGE(nothing.err.find("no unfinished suite") != std::string::npos, nothing.err);
  }

  TEST_CASE("a suite killed with SIGKILL in its second task, then stopped by SIGINT in its third, resumes and finishes every task once") {
    Workspace workspace;
    constexpr int kBudget = 5;
    Process suite = workspace.Spawn({"suite", "run", "--tasks", "affine,affine_wide,triad", "--evals-per-task",
                                     std::to_string(kBudget), "--min-time", "0.01", "--quiet"});
    REQUIRE(WaitForRunOf(workspace, "affine_wide", suite));
    // A second process on the running suite is refused: it marked the live
    // task failed and ran the remaining tasks a second time.
    const Exec second = workspace.Run({"suite", "resume", "--quiet"});
    CHECK(second.code == 1);
    CHECK_MESSAGE(second.err.find("suite 1 is being run by another kestrel process") != std::string::npos, second.err);
    REQUIRE(kill(suite.pid, SIGKILL) == 0);
    CHECK(Workspace::Wait(suite).code != 0);

    const json killed = ParseJson(workspace.Run({"suite", "report", "--json"}));
    CHECK(killed.at("state") == "running");  // killed: nobody marked it
    CHECK(killed.at("tasks")[0].at("state") == "done");
    CHECK(killed.at("tasks")[1].at("state") == "running");
    CHECK(killed.at("tasks")[2].at("state") == "pending");

    // Resumed, then stopped by SIGINT in its last task: it stops cleanly, as `kestrel run` does.
    Process again = workspace.Spawn({"suite", "resume", "--quiet"});
    REQUIRE(WaitForRunOf(workspace, "triad", again));
    REQUIRE(kill(again.pid, SIGINT) == 0);
    const Exec stopped = Workspace::Wait(again);
    CHECK(stopped.code == 130);
    CHECK(stopped.out.find("interrupted: kestrel suite resume goes on") != std::string::npos);
    const json interrupted = ParseJson(workspace.Run({"suite", "report", "--json"}));
    CHECK(interrupted.at("state") == "interrupted");
    CHECK(interrupted.at("tasks")[1].at("state") == "done");
    CHECK(interrupted.at("tasks")[2].at("state") == "running");

    const Exec resumed = workspace.Run({"suite", "resume", "--quiet"});
    INFO("stdout: " << resumed.out << "\nstderr: " << resumed.err);
    REQUIRE(resumed.code == 0);
    CHECK(resumed.out.find("suite 1: 3 of 3 tasks done") != std::string::npos);

    const auto runs = RunsByTask(workspace);
    REQUIRE(runs.size() == 3);
    for (const auto& [task, of_task] : runs) {
      INFO(task);
      REQUIRE(of_task.size() == 1);  // the killed task's run was resumed, not started again
      CHECK(of_task[0].at("evaluations") == kBudget);
      CHECK(of_task[0].at("status") == "finished");
    }
    const json report = ParseJson(workspace.Run({"suite", "report", "--json"}));
    CHECK(report.at("state") == "done");
    for (const json& task : report.at("tasks")) CHECK(task.at("state") == "done");
    auto store = Store::Open(workspace.db(), Store::Mode::kReadOnly);
    REQUIRE_MESSAGE(store.has_value(), testing::ErrorOf(store));
    CHECK(*(*store)->IntegrityOk());
  }
}
