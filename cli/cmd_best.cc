// kestrel best [--task NAME] [--run ID] [--host NAME] [--top N] [--json]:
// the best verified kernels, ranked by speedup.

#include <algorithm>
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "cli/output.h"

namespace kestrel::cli {
namespace {

struct BestFlags {
  std::string task;
  std::int64_t run = 0;
  std::string host;
  int top = 10;
  bool json = false;
};

}  // namespace

void AddBestCommand(CLI::App& app, Cli& cli) {
  auto flags = std::make_shared<BestFlags>();
  CLI::App* best = app.add_subcommand("best", "the best verified kernels, ranked by median speedup");
  best->add_option("--task", flags->task, "only this task");
  best->add_option("--run", flags->run, "only nodes of this run")->check(CLI::PositiveNumber);
  best->add_option("--host", flags->host, "only measurements taken on this host");
  best->add_option("--top", flags->top, "how many (default 10)")->check(CLI::PositiveNumber);
  best->add_flag("--json", flags->json, "print one JSON document");
  best->callback([flags, &cli] {
    auto store = cli.OpenForReading();
    if (!store) return (void)cli.Report(store.error());
    BestQuery query;
    if (!flags->task.empty()) query.task = flags->task;
    if (flags->run > 0) query.run_id = flags->run;
    if (!flags->host.empty()) query.host = flags->host;
    query.top = flags->top;
    auto rows = (*store)->Best(query);
    if (!rows) return (void)cli.Report(rows.error());
    if (flags->json) {
      nlohmann::json document = nlohmann::json::array();
      for (const BestRow& row : *rows) document.push_back(ToJson(row));
      std::cout << document.dump(2) << "\n";
      return;
    }
    if (rows->empty()) {
      std::cout << "no measured kernels yet\n";
      return;
    }
    // "vs baseline" only when some row's task has an expert baseline.
    const bool baselines = std::any_of(rows->begin(), rows->end(), [](const BestRow& row) { return row.baseline_speedup > 0; });
    std::vector<std::string> header = {"rank", "node", "task", "speedup", "confidence", "roofline", "run", "host", "knobs"};
    if (baselines) header.insert(header.begin() + 4, "vs baseline");
    Table table(header);
    int rank = 0;
    for (const BestRow& row : *rows) {
      std::vector<std::string> cells = {std::to_string(++rank), std::to_string(row.node_id), row.task_name,
                                        FormatSpeedup(row.speedup), FormatConfidence(row),
                                        FormatRoofline(row.roofline_fraction), std::to_string(row.run_id),
                                        row.host_name, row.knobs.empty() ? row.mutation : ToString(row.knobs)};
      if (baselines) cells.insert(cells.begin() + 4, FormatOverBaseline(row.speedup, row.baseline_speedup));
      table.Add(cells);
    }
    table.Print(std::cout);
  });
}

}  // namespace kestrel::cli
