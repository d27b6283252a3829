// kestrel lineage NODE [--json]: the path from a seed to NODE, with the
// mutation and speedup of each step.

#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "cli/cli.h"
#include "cli/output.h"
#include "core/json_text.h"
#include "search/engine/graph_loader.h"

namespace kestrel::cli {

void AddLineageCommand(CLI::App& app, Cli& cli) {
  auto node_id = std::make_shared<std::int64_t>(0);
  auto json = std::make_shared<bool>(false);
  CLI::App* lineage = app.add_subcommand("lineage", "the path from a seed to a node, step by step");
  lineage->add_option("node", *node_id, "the node's id")->required()->check(AboveZero());
  lineage->add_flag("--json", *json, "print one JSON document");
  lineage->callback([node_id, json, &cli] {
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
    int step = 0;
    for (NodeId id : graph.Lineage(node->id)) {
      const GraphNode& entry = graph.Node(id);
      steps.push_back({{"node", id},
                       {"status", ToString(entry.status)},
                       {"speedup", entry.speedup ? nlohmann::json(*entry.speedup) : nlohmann::json()},
                       {"mutation", entry.mutation},
                       {"label", entry.label},
                       {"same_code_as", twins.count(id) != 0 ? nlohmann::json(twins.at(id)) : nlohmann::json()}});
      const std::string twin = twins.count(id) != 0 ? fmt::format("  (same code as node {}: not timed)", twins.at(id)) : "";
      table.Add({std::to_string(step++), std::to_string(id), std::string(ToString(entry.status)),
                 entry.speedup ? FormatSpeedup(*entry.speedup) : "-", entry.mutation + twin});
    }
    if (*json) {
      std::cout << JsonText(steps, 2) << "\n";
    } else {
      table.Print(std::cout);
    }
  });
}

}  // namespace kestrel::cli
