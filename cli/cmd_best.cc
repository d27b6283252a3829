// kestrel best [--task NAME] [--run ID] [--host NAME] [--top N] [--json]:
// the best verified kernels, ranked by speedup; a labelled node shows its
// label, and results awaiting a person's review (search/review_queue.h) are
// marked and listed until someone labels them.

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "cli/cli.h"
#include "cli/human_output.h"
#include "cli/output.h"
#include "core/json_text.h"
#include "search/review_queue.h"

namespace kestrel::cli {
namespace {

struct BestFlags {
  std::string task;
  std::int64_t run = 0;
  std::string host;
  int top = 10;
  bool json = false;
};

// What people said about the rows' nodes: each one's label, and the review
// queue of every graph a row belongs to (graph order, then queue order).
struct HumanMarks {
  std::map<std::int64_t, std::string> labels;
  std::map<std::int64_t, ReviewItem> awaiting;  // by node
  std::vector<ReviewItem> queue;
};

Result<HumanMarks> MarksOf(Store& store, const std::vector<BestRow>& rows) {
  HumanMarks marks;
  std::set<std::int64_t> graphs;
  for (const BestRow& row : rows) {
    auto node = store.GetNode(row.node_id);
    if (!node) return Fail(node.error());
    graphs.insert(node->graph_id);
    auto label = store.NodeLabel(row.node_id);
    if (!label) return Fail(label.error());
    if (*label) marks.labels[row.node_id] = (*label)->text;
  }
  for (std::int64_t graph : graphs) {
    auto queue = AwaitingReview(store, graph);
    if (!queue) return Fail(queue.error());
    for (const ReviewItem& item : *queue) {
      marks.awaiting[item.node_id] = item;
      marks.queue.push_back(item);
    }
  }
  return marks;
}

// A --task or --host that names nothing is a mistake (a typo), not "no
// measured kernels yet": InvalidArgument. A task is known from the runs in
// the database or from the task folders (a task not yet searched).
Status CheckNamed(Store& store, const Cli& cli, const BestFlags& flags) {
  if (!flags.task.empty()) {
    auto runs = store.ListRuns();
    if (!runs) return Fail(runs.error());
    const bool searched =
        std::any_of(runs->begin(), runs->end(), [&](const RunRecord& run) { return run.task_name == flags.task; });
    if (!searched) {
      auto folders = FindTaskFolders(cli.TaskDirs());
      if (!folders) return Fail(folders.error());
      const bool found = std::any_of(folders->begin(), folders->end(),
                                     [&](const TaskFolder& folder) { return folder.name == flags.task; });
      if (!found) {
        return Fail(Error::InvalidArgument("--task " + flags.task +
                                           ": no such task in the database or the task folders (`kestrel tasks` "
                                           "lists them)"));
      }
    }
  }
  if (!flags.host.empty()) {
    auto hosts = store.ListHosts();
    if (!hosts) return Fail(hosts.error());
    std::string names;
    for (const HostRecord& host : *hosts) {
      if (host.info.name == flags.host) return {};
      names += (names.empty() ? "" : ", ") + host.info.name;
    }
    return Fail(Error::InvalidArgument("--host " + flags.host + ": no such host in the database (" +
                                       (names.empty() ? std::string("none yet") : "its hosts: " + names) + ")"));
  }
  return {};
}

}  // namespace

void AddBestCommand(CLI::App& app, Cli& cli) {
  auto flags = std::make_shared<BestFlags>();
  CLI::App* best = app.add_subcommand("best", "the best verified kernels, ranked by median speedup");
  best->add_option("--task", flags->task, "only this task");
  best->add_option("--run", flags->run, "only nodes of this run")->check(AboveZero());
  best->add_option("--host", flags->host, "only measurements taken on this host");
  best->add_option("--top", flags->top, "how many (default 10)")->check(AboveZero());
  best->add_flag("--json", flags->json, "print one JSON document");
  best->callback([flags, &cli] {
    auto store = cli.OpenForReading();
    if (!store) return (void)cli.Report(store.error());
    if (flags->run > 0) {
      if (auto run = NamedRun(**store, flags->run); !run) return (void)cli.Report(run.error());
    }
    if (auto named = CheckNamed(**store, cli, *flags); !named) return (void)cli.Report(named.error());
    BestQuery query;
    if (!flags->task.empty()) query.task = flags->task;
    if (flags->run > 0) query.run_id = flags->run;
    if (!flags->host.empty()) query.host = flags->host;
    query.top = flags->top;
    auto rows = (*store)->Best(query);
    if (!rows) return (void)cli.Report(rows.error());
    auto marks = MarksOf(**store, *rows);
    if (!marks) return (void)cli.Report(marks.error());
    const auto label_of = [&](std::int64_t node) {
      const auto found = marks->labels.find(node);
      return found == marks->labels.end() ? std::string() : found->second;
    };
    if (flags->json) {
      nlohmann::json document = nlohmann::json::array();
      for (const BestRow& row : *rows) {
        nlohmann::json entry = ToJson(row);
        const std::string label = label_of(row.node_id);
        entry["label"] = label.empty() ? nlohmann::json() : nlohmann::json(label);
        const auto awaiting = marks->awaiting.find(row.node_id);
        entry["awaiting_review"] = awaiting == marks->awaiting.end() ? nlohmann::json() : ToJson(awaiting->second);
        document.push_back(entry);
      }
      std::cout << JsonText(document, 2) << "\n";
      return;
    }
    if (rows->empty()) {
      std::cout << "no measured kernels yet\n";
      return;
    }
    // "vs baseline" only when some row's task has an expert baseline.
    const bool baselines = std::any_of(rows->begin(), rows->end(), [](const BestRow& row) { return row.baseline_speedup > 0; });
    std::vector<std::string> header = {"rank", "node", "task", "speedup", "confidence", "roofline", "run", "host", "knobs", "label"};
    if (baselines) header.insert(header.begin() + 4, "vs baseline");
    Table table(header);
    int rank = 0;
    for (const BestRow& row : *rows) {
      std::vector<std::string> cells = {std::to_string(++rank), std::to_string(row.node_id), row.task_name,
                                        FormatSpeedup(row.speedup), FormatConfidence(row),
                                        FormatRoofline(row.roofline_fraction), std::to_string(row.run_id),
                                        row.host_name, row.knobs.empty() ? row.mutation : ToString(row.knobs),
                                        marks->awaiting.contains(row.node_id) ? "AWAITING REVIEW"
                                        : label_of(row.node_id).empty()        ? "-"
                                                                               : label_of(row.node_id)};
      if (baselines) cells.insert(cells.begin() + 4, FormatOverBaseline(row.speedup, row.baseline_speedup));
      table.Add(cells);
    }
    table.Print(std::cout);
    if (!marks->queue.empty()) {
      std::cout << "\nawaiting review (label them: kestrel label NODE clean|reward_hack|suspicious|wrong|interesting):\n";
      for (const ReviewItem& item : marks->queue) {
        std::cout << fmt::format("  node {}  {}  {}\n", item.node_id, FormatSpeedup(item.speedup), item.reason);
      }
    }
  });
}

}  // namespace kestrel::cli
