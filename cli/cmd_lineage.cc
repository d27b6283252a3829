// kestrel lineage NODE [--diff] [--json]: the path from a seed to NODE, with
// the mutation and speedup of each step; with --diff, what each step changed
// (its source as a unified diff, or its knobs).

#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/cli.h"
#include "cli/output.h"
#include "cli/source_diff.h"
#include "core/json_text.h"
#include "search/engine/graph_loader.h"

namespace kestrel::cli {

void AddLineageCommand(CLI::App& app, Cli& cli) {
  auto node_id = std::make_shared<std::int64_t>(0);
  auto json = std::make_shared<bool>(false);
  auto diff = std::make_shared<bool>(false);
  CLI::App* lineage = app.add_subcommand("lineage", "the path from a seed to a node, step by step");
  lineage->add_option("node", *node_id, "the node's id")->required()->check(AboveZero());
  lineage->add_flag("--diff", *diff, "what each step changed: its source as a unified diff, or its knobs");
  lineage->add_flag("--json", *json, "print one JSON document");
  lineage->callback([node_id, json, diff, &cli] {
    auto store = cli.OpenForReading();
    if (!store) return (void)cli.Report(store.error());
    auto node = NamedNode(**store, *node_id);
    if (!node) return (void)cli.Report(node.error());
    auto loaded = LoadSearchGraph(**store, node->graph_id);
    if (!loaded) return (void)cli.Report(loaded.error());
    const SearchGraph& graph = loaded->graph;
    std::map<NodeId, NodeId> twins;  // same_code edges: copy -> the node it is the same code as
    for (const GraphEdge& edge : graph.Edges()) {
      if (edge.kind == EdgeKind::kSameCode) twins[edge.parent] = edge.child;
    }
    nlohmann::json steps = nlohmann::json::array();
    Table table({"step", "node", "status", "speedup", "mutation"});
    std::string changes;  // --diff, as text
    std::optional<NodeRecord> previous;
    int step = 0;
    for (NodeId id : graph.Lineage(node->id)) {
      const GraphNode& entry = graph.Node(id);
      nlohmann::json row = {{"node", id},
                            {"status", ToString(entry.status)},
                            {"speedup", entry.speedup ? nlohmann::json(*entry.speedup) : nlohmann::json()},
                            {"mutation", entry.mutation},
                            {"label", entry.label},
                            {"same_code_as", twins.count(id) != 0 ? nlohmann::json(twins.at(id)) : nlohmann::json()}};
      if (*diff) {
        auto record = (*store)->GetNode(id);
        if (!record) return (void)cli.Report(record.error());
        if (previous) {
          const std::string source = UnifiedDiff(previous->source, record->source, fmt::format("node {}", previous->id),
                                                 fmt::format("node {}", id));
          std::string knobs;
          for (const auto& [name, value] : record->knobs) {
            const auto before = previous->knobs.find(name);
            const std::string was = before == previous->knobs.end() ? "-" : before->second;
            if (was != value) knobs += fmt::format("{}{} {}->{}", knobs.empty() ? "" : ", ", name, was, value);
          }
          row["diff"] = source;
          row["knob_changes"] = knobs;
          changes += fmt::format("\n== step {}: node {} -> node {} ({})\n", step, previous->id, id, entry.mutation);
          if (!knobs.empty()) changes += "knobs: " + knobs + "\n";
          changes += source.empty() ? std::string("source: unchanged\n") : source;
        }
        previous = std::move(*record);
      }
      steps.push_back(std::move(row));
      const std::string twin = twins.count(id) != 0 ? fmt::format("  (same code as node {}: not timed)", twins.at(id)) : "";
      table.Add({std::to_string(step++), std::to_string(id), std::string(ToString(entry.status)),
                 entry.speedup ? FormatSpeedup(*entry.speedup) : "-", entry.mutation + twin});
    }
    if (*json) {
      std::cout << JsonText(steps, 2) << "\n";
    } else {
      table.Print(std::cout);
      std::cout << changes;
    }
  });
}

}  // namespace kestrel::cli
