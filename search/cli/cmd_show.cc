// kestrel show NODE [--json]: one node: source, knobs, status, measurements,
// compiler log, its place in the graph.

#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "search/cli/cli.h"
#include "search/cli/output.h"
#include "search/graph_loader.h"

namespace kestrel::cli {
namespace {

std::string JoinIds(const std::vector<NodeId>& ids) {
  std::string out;
  for (NodeId id : ids) out += (out.empty() ? "" : ", ") + std::to_string(id);
  return out.empty() ? "-" : out;
}

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& word : words) out += (out.empty() ? "" : " ") + word;
  return out;
}

}  // namespace

void AddShowCommand(CLI::App& app, Cli& cli) {
  auto node_id = std::make_shared<std::int64_t>(0);
  auto json = std::make_shared<bool>(false);
  CLI::App* show = app.add_subcommand("show", "one node: source, knobs, status, measurements, logs");
  show->add_option("node", *node_id, "the node's id")->required()->check(CLI::PositiveNumber);
  show->add_flag("--json", *json, "print one JSON document");
  show->callback([node_id, json, &cli] {
    auto store = cli.OpenForReading();
    if (!store) return (void)cli.Report(store.error());
    auto node = (*store)->GetNode(*node_id);
    if (!node) return (void)cli.Report(node.error());
    auto measurements = (*store)->GetMeasurements(node->id);
    if (!measurements) return (void)cli.Report(measurements.error());
    auto loaded = LoadSearchGraph(**store, node->graph_id);
    if (!loaded) return (void)cli.Report(loaded.error());
    auto llm_calls = (*store)->LlmCallsForNode(node->id);
    if (!llm_calls) return (void)cli.Report(llm_calls.error());
    const auto parents = loaded->graph.Parents(node->id);
    const auto children = loaded->graph.Children(node->id);

    if (*json) {
      nlohmann::json document = ToJson(*node, true);
      document["parents"] = parents;
      document["children"] = children;
      document["measurements"] = nlohmann::json::array();
      for (const auto& record : *measurements) {
        nlohmann::json entry = ToJson(record.measurement, true);
        entry["id"] = record.id;
        entry["run"] = record.run_id;
        entry["host"] = record.host_id;
        entry["measured_at"] = FormatTimestamp(record.created_at);
        document["measurements"].push_back(entry);
      }
      document["llm_calls"] = nlohmann::json::array();
      for (const auto& call : *llm_calls) {
        document["llm_calls"].push_back({{"id", call.id}, {"model", call.model}, {"prompt", call.prompt},
                                         {"response", call.response}, {"cost_usd", call.cost_usd}});
      }
      std::cout << document.dump(2) << "\n";
      return;
    }
    std::cout << fmt::format("node {}  {}", node->id, ToString(node->status));
    if (node->speedup && node->status == NodeStatus::kMeasured) std::cout << "  " << FormatSpeedup(*node->speedup);
    std::cout << "\n";
    Table fields({"identity", node->identity});
    fields.Add({"mutation", node->mutation + (parents.empty() ? "" : "  (from node " + JoinIds(parents) + ")")});
    fields.Add({"knobs", node->knobs.empty() ? "-" : ToString(node->knobs)});
    fields.Add({"toolchain", node->toolchain});
    fields.Add({"flags", Join(node->flags)});
    fields.Add({"run", fmt::format("{} (graph {}), created {}", node->run_id, node->graph_id,
                                   FormatTimestamp(node->created_at))});
    fields.Add({"children", JoinIds(children)});
    if (!node->reason.empty()) fields.Add({"reason", node->reason});
    fields.Print(std::cout);
    for (const auto& record : *measurements) {
      std::cout << fmt::format("\nmeasurement {} (run {}, host {}, {}):\n", record.id, record.run_id, record.host_id,
                               FormatTimestamp(record.created_at));
      PrintMeasurement(std::cout, record.measurement);
    }
    for (const auto& call : *llm_calls) {
      std::cout << fmt::format("\nLLM call {} ({}), ${:.4f}\n", call.id, call.model, call.cost_usd);
    }
    std::cout << "\nsource:\n" << node->source;
    if (!node->source.empty() && node->source.back() != '\n') std::cout << "\n";
  });
}

}  // namespace kestrel::cli
