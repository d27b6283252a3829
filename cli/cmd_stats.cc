// kestrel stats [--run ID] [--json]: per direction category (a bandit
// direction, a recommendation of the analysis, knob moves, combines, fixes)
// the children made, how many beat their parent, how many failed and the
// mean gain over the parent, and how well a cost model's predictions matched; for one run, or for every graph of the database.

#include <iostream>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "cli/cli.h"
#include "cli/output.h"
#include "core/json_text.h"
#include "search/mutators/direction_stats.h"

namespace kestrel::cli {
namespace {

struct StatsFlags {
  std::int64_t run = 0;
  bool json = false;
};

// The stats of `run` (0: every run) over the graphs `graphs`.
Result<std::vector<DirectionStats>> StatsOf(Store& store, const std::set<std::int64_t>& graphs, std::int64_t run) {
  std::vector<NodeRecord> nodes;
  std::vector<EdgeRecord> edges;
  for (std::int64_t graph : graphs) {
    auto graph_nodes = store.LoadNodes(graph);
    if (!graph_nodes) return Fail(graph_nodes.error());
    auto graph_edges = store.LoadEdges(graph);
    if (!graph_edges) return Fail(graph_edges.error());
    nodes.insert(nodes.end(), graph_nodes->begin(), graph_nodes->end());
    edges.insert(edges.end(), graph_edges->begin(), graph_edges->end());
  }
  return ComputeDirectionStats(nodes, edges, run > 0 ? std::optional<std::int64_t>(run) : std::nullopt);
}

}  // namespace

void AddStatsCommand(CLI::App& app, Cli& cli) {
  auto flags = std::make_shared<StatsFlags>();
  CLI::App* stats = app.add_subcommand("stats", "what each mutation direction achieved: tries, successes, failures, mean gain");
  stats->add_option("--run", flags->run, "only the children this run made")->check(AboveZero());
  stats->add_flag("--json", flags->json, "print one JSON document");
  stats->callback([flags, &cli] {
    auto store = cli.OpenForReading();
    if (!store) return (void)cli.Report(store.error());
    std::set<std::int64_t> graphs;
    if (flags->run > 0) {
      auto run = NamedRun(**store, flags->run);
      if (!run) return (void)cli.Report(run.error());
      graphs.insert(run->graph_id);
    } else {
      auto runs = (*store)->ListRuns();
      if (!runs) return (void)cli.Report(runs.error());
      for (const RunRecord& run : *runs) graphs.insert(run.graph_id);
    }
    auto rows = StatsOf(**store, graphs, flags->run);
    if (!rows) return (void)cli.Report(rows.error());
    if (flags->json) {
      nlohmann::json document = nlohmann::json::array();
      for (const DirectionStats& row : *rows) {
        document.push_back({{"category", row.category},
                            {"tries", row.tries},
                            {"successes", row.successes},
                            {"failures", row.failures},
                            {"pending", row.pending},
                            {"mean_gain", row.gains > 0 ? nlohmann::json(row.mean_gain) : nlohmann::json()},
                            {"predicted", row.predicted},
                            {"rank_correlation", row.rank_correlation ? nlohmann::json(*row.rank_correlation) : nlohmann::json()},
                            {"median_error", row.median_error ? nlohmann::json(*row.median_error) : nlohmann::json()}});
      }
      std::cout << JsonText(document, 2) << "\n";
      return;
    }
    if (rows->empty()) {
      std::cout << "no mutations yet\n";
      return;
    }
    Table table({"direction", "tries", "faster", "failed", "pending", "mean gain", "predicted (rank corr., median error)"});
    for (const DirectionStats& row : *rows) {
      std::string predicted = "-";
      if (row.predicted > 0) {
        predicted = fmt::format("{} ({}, {:.0f}%)", row.predicted,
                                row.rank_correlation ? fmt::format("{:+.2f}", *row.rank_correlation) : "-",
                                100.0 * row.median_error.value_or(0.0));
      }
      table.Add({row.category, std::to_string(row.tries), std::to_string(row.successes), std::to_string(row.failures),
                 std::to_string(row.pending), row.gains > 0 ? fmt::format("{:+.1f}%", 100.0 * row.mean_gain) : "-",
                 predicted});
    }
    table.Print(std::cout);
  });
}

}  // namespace kestrel::cli
