// kestrel runs [--json]: id, task, status, started, evaluations, the
// candidates not timed because their code was a measured node's, best speedup.

#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "cli/output.h"
#include "core/json_text.h"
#include "search/graph_lock.h"

namespace kestrel::cli {

void AddRunsCommand(CLI::App& app, Cli& cli) {
  auto json = std::make_shared<bool>(false);
  CLI::App* runs = app.add_subcommand("runs", "list the runs of the database, newest first");
  runs->add_flag("--json", *json, "print one JSON document");
  runs->callback([json, &cli] {
    auto store = cli.OpenForReading();
    if (!store) return (void)cli.Report(store.error());
    auto list = (*store)->ListRuns();
    if (!list) return (void)cli.Report(list.error());
    // A run stored as running whose process is gone (killed: its graph's
    // lock is free) says so; `kestrel resume` goes on with it.
    const auto alive = [&cli](const RunRecord& run) {
      return run.status != RunStatus::kRunning || GraphLock::Held(cli.db, run.graph_id);
    };
    if (*json) {
      nlohmann::json document = nlohmann::json::array();
      for (const RunRecord& run : *list) {
        nlohmann::json entry = ToJson(run);
        if (run.status == RunStatus::kRunning) entry["alive"] = alive(run);
        document.push_back(std::move(entry));
      }
      std::cout << JsonText(document, 2) << "\n";
      return;
    }
    Table table({"run", "task", "status", "stop", "started", "evals", "same code", "best"});
    for (const RunRecord& run : *list) {
      const std::string status = alive(run) ? std::string(ToString(run.status)) : "killed (kestrel resume)";
      table.Add({std::to_string(run.id), run.task_name, status, run.stop_reason.empty() ? "-" : run.stop_reason,
                 FormatTimestamp(run.started_at), std::to_string(run.evaluations), std::to_string(run.same_code),
                 run.best_speedup ? FormatSpeedup(*run.best_speedup) : "-"});
    }
    table.Print(std::cout);
  });
}

}  // namespace kestrel::cli
