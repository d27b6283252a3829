// kestrel show NODE [--json] [--prompt] [--profile]: one node: source, knobs,
// status, measurements, compiler log, its place in the graph; with --prompt,
// the LLM exchange (prompt and reply of each call) that produced it; with
// --profile, its latest profile (core/profile.h): the digest, or with
// --json the stored document.

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/cli.h"
#include "cli/human_output.h"
#include "cli/output.h"
#include "core/json_text.h"
#include "search/engine/graph_loader.h"

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

// The prompt messages of a stored call, one block each; a prompt that is not
// the JSON array Kestrel stores is printed as it is.
void PrintPrompt(std::ostream& out, const std::string& prompt_json) {
  try {
    for (const auto& message : nlohmann::json::parse(prompt_json)) {
      out << "--- " << message.at("role").get<std::string>() << " ---\n"
          << message.at("content").get<std::string>() << "\n";
    }
  } catch (const nlohmann::json::exception&) {
    out << "--- prompt ---\n" << prompt_json << "\n";
  }
}

void PrintExchange(std::ostream& out, const NodeRecord& node, const std::vector<LlmCallRecord>& calls) {
  // An analysis of the node is its own call, not one that made it.
  bool made = false;
  for (const auto& call : calls) made = made || call.purpose != "analysis";
  if (!made) {
    out << fmt::format("node {} was not made by an LLM call (mutation: {})\n", node.id, node.mutation);
  }
  for (const auto& call : calls) {
    out << fmt::format("=== LLM call {} ({}) to {} {} (run {}, {}): {} in / {} out tokens, ${:.4f}, {:.1f}s, HTTP {}{}{}\n",
                       call.id, call.purpose, call.provider, call.model, call.run_id, FormatTimestamp(call.created_at),
                       call.input_tokens, call.output_tokens, call.cost_usd, call.latency_s, call.http_status,
                       call.retries > 0 ? fmt::format(", {} retries", call.retries) : std::string(),
                       call.error.empty() ? std::string() : ", error: " + call.error);
    PrintPrompt(out, call.prompt);
    out << "--- reply ---\n" << call.response;
    if (!call.response.empty() && call.response.back() != '\n') out << "\n";
  }
}

// Why a node has no profile and how it would get one.
std::string NoProfileNote(std::int64_t node) {
  return fmt::format(
      "node {} has no profile on any host. A run profiles its new bests, the parents an LLM mutator is about to "
      "expand and the top of `kestrel best` at its end (docs/PROFILES.md): run or resume a search in which this "
      "node is one of those.",
      node);
}

nlohmann::json StoredProfile(const std::optional<ProfileRecord>& record) {
  if (!record) return nullptr;
  try {
    return nlohmann::json::parse(record->profile_json);
  } catch (const nlohmann::json::exception&) {
    return record->profile_json;  // kept as stored, never lost
  }
}

void PrintProfile(std::ostream& out, std::int64_t node, const std::optional<ProfileRecord>& record, bool json) {
  if (json) {
    nlohmann::json document = {{"node", node}, {"profile", StoredProfile(record)}};
    if (record) {
      document["host"] = record->host_id;
      document["run"] = record->run_id;
      document["seconds"] = record->seconds;
      document["created_at"] = FormatTimestamp(record->created_at);
      document["digest"] = record->digest;
    } else {
      document["note"] = NoProfileNote(node);
    }
    out << JsonText(document, 2) << "\n";
    return;
  }
  if (!record) {
    out << NoProfileNote(node) << "\n";
    return;
  }
  out << fmt::format("profile of node {} (host {}, run {}, {}, took {:.2f}s):\n", node, record->host_id,
                     record->run_id, FormatTimestamp(record->created_at), record->seconds)
      << record->digest;
  if (!record->digest.empty() && record->digest.back() != '\n') out << "\n";
}

}  // namespace

void AddShowCommand(CLI::App& app, Cli& cli) {
  auto node_id = std::make_shared<std::int64_t>(0);
  auto json = std::make_shared<bool>(false);
  auto prompt = std::make_shared<bool>(false);
  auto profile = std::make_shared<bool>(false);
  CLI::App* show = app.add_subcommand("show", "one node: source, knobs, status, measurements, logs");
  show->add_option("node", *node_id, "the node's id")->required()->check(AboveZero());
  show->add_flag("--json", *json, "print one JSON document");
  show->add_flag("--prompt", *prompt, "the LLM exchange (prompts and replies) that produced the node");
  show->add_flag("--profile", *profile, "the node's latest profile: its digest (with --json: the stored profile)");
  show->callback([node_id, json, prompt, profile, &cli] {
    auto store = cli.OpenForReading();
    if (!store) return (void)cli.Report(store.error());
    auto node = NamedNode(**store, *node_id);
    if (!node) return (void)cli.Report(node.error());
    auto measurements = (*store)->GetMeasurements(node->id);
    if (!measurements) return (void)cli.Report(measurements.error());
    auto loaded = LoadSearchGraph(**store, node->graph_id);
    if (!loaded) return (void)cli.Report(loaded.error());
    auto llm_calls = (*store)->LlmCallsForNode(node->id);
    if (!llm_calls) return (void)cli.Report(llm_calls.error());
    if (*prompt && !*json) return PrintExchange(std::cout, *node, *llm_calls);
    auto stored_profile = (*store)->LatestProfile(node->id, 0);
    if (!stored_profile) return (void)cli.Report(stored_profile.error());
    auto actions = (*store)->NodeActions(node->id);
    if (!actions) return (void)cli.Report(actions.error());
    if (*profile) return PrintProfile(std::cout, node->id, *stored_profile, *json);
    // same_code edges (copy -> twin) are not derivations: shown apart.
    std::optional<NodeId> same_code_as;
    std::vector<NodeId> same_code_copies;
    for (const GraphEdge& edge : loaded->graph.Edges()) {
      if (edge.kind != EdgeKind::kSameCode) continue;
      if (edge.parent == node->id) same_code_as = edge.child;
      if (edge.child == node->id) same_code_copies.push_back(edge.parent);
    }
    // Parents and children by the edges that are derivations: a node can be
    // both its parent's child and its same-code copy (the derive edge was
    // hidden with the same_code one when filtered by node).
    std::vector<NodeId> parents, children;
    for (const GraphEdge& edge : loaded->graph.Edges()) {
      if (edge.kind == EdgeKind::kSameCode) continue;
      if (edge.child == node->id && std::find(parents.begin(), parents.end(), edge.parent) == parents.end()) {
        parents.push_back(edge.parent);
      }
      if (edge.parent == node->id && std::find(children.begin(), children.end(), edge.child) == children.end()) {
        children.push_back(edge.child);
      }
    }

    if (*json) {
      nlohmann::json document = ToJson(*node, true);
      document["parents"] = parents;
      document["children"] = children;
      document["same_code_as"] = same_code_as ? nlohmann::json(*same_code_as) : nlohmann::json();
      document["same_code_copies"] = same_code_copies;
      document["measurements"] = nlohmann::json::array();
      for (const auto& record : *measurements) {
        nlohmann::json entry = ToJson(record.measurement, true);
        entry["id"] = record.id;
        entry["run"] = record.run_id;
        entry["host"] = record.host_id;
        entry["purpose"] = record.purpose;
        entry["measured_at"] = FormatTimestamp(record.created_at);
        document["measurements"].push_back(entry);
      }
      document["profile"] = StoredProfile(*stored_profile);
      document["label"] = nullptr;
      document["actions"] = nlohmann::json::array();
      for (const HumanActionRecord& action : *actions) {
        if (action.kind == HumanActionKind::kLabel) document["label"] = action.text;
        document["actions"].push_back(ToJson(action));
      }
      document["llm_calls"] = nlohmann::json::array();
      for (const auto& call : *llm_calls) {
        nlohmann::json messages;
        try {
          messages = nlohmann::json::parse(call.prompt);
        } catch (const nlohmann::json::exception&) {
          messages = call.prompt;
        }
        document["llm_calls"].push_back({{"id", call.id},
                                         {"run", call.run_id},
                                         {"provider", call.provider},
                                         {"model", call.model},
                                         {"purpose", call.purpose},
                                         {"prompt", messages},
                                         {"response", call.response},
                                         {"input_tokens", call.input_tokens},
                                         {"output_tokens", call.output_tokens},
                                         {"cost_usd", call.cost_usd},
                                         {"latency_s", call.latency_s},
                                         {"http_status", call.http_status},
                                         {"retries", call.retries},
                                         {"error", call.error}});
      }
      std::cout << JsonText(document, 2) << "\n";
      return;
    }
    std::cout << fmt::format("node {}  {}", node->id, ToString(node->status));
    if (node->speedup && node->status == NodeStatus::kMeasured) {
      std::cout << "  " << FormatSpeedup(*node->speedup);
      // Beside it, over the task's expert baseline as the newest measurement timed it.
      const auto timed = std::find_if(measurements->rbegin(), measurements->rend(), [](const MeasurementRecord& record) {
        return record.measurement.outcome == Outcome::kMeasured && record.measurement.baseline_speedup > 0;
      });
      if (timed != measurements->rend()) {
        std::cout << "  (" << FormatOverBaseline(*node->speedup, timed->measurement.baseline_speedup) << " vs baseline)";
      }
    }
    std::cout << "\n";
    Table fields({"identity", node->identity});
    fields.Add({"mutation", node->mutation + (parents.empty() ? "" : "  (from node " + JoinIds(parents) + ")")});
    fields.Add({"knobs", node->knobs.empty() ? "-" : ToString(node->knobs)});
    fields.Add({"toolchain", node->toolchain});
    fields.Add({"flags", Join(node->flags)});
    fields.Add({"run", fmt::format("{} (graph {}), created {}", node->run_id, node->graph_id,
                                   FormatTimestamp(node->created_at))});
    fields.Add({"children", JoinIds(children)});
    if (same_code_as) fields.Add({"same code as", fmt::format("node {} (not timed: its result is a copy)", *same_code_as)});
    if (!same_code_copies.empty()) fields.Add({"same code in", JoinIds(same_code_copies) + " (not timed)"});
    if (!node->reason.empty()) fields.Add({"reason", node->reason});
    if (*stored_profile) {
      fields.Add({"profile", fmt::format("host {}, {} (kestrel show {} --profile)", (*stored_profile)->host_id,
                                         FormatTimestamp((*stored_profile)->created_at), node->id)});
    }
    const auto label = std::find_if(actions->rbegin(), actions->rend(),
                                    [](const HumanActionRecord& action) { return action.kind == HumanActionKind::kLabel; });
    if (label != actions->rend()) {
      fields.Add({"label", fmt::format("{} (by {}, {})", label->text, label->author, FormatTimestamp(label->created_at))});
    }
    fields.Print(std::cout);
    if (!actions->empty()) {
      std::cout << "\nnotes and actions:\n";
      for (const HumanActionRecord& action : *actions) std::cout << "  " << FormatAction(action) << "\n";
    }
    for (const auto& record : *measurements) {
      std::cout << fmt::format("\nmeasurement {} (run {}, host {}, {}{}):\n", record.id, record.run_id,
                               record.host_id, FormatTimestamp(record.created_at),
                               record.purpose == "confirm"     ? ", a confirmation re-measurement"
                               : record.purpose == "same_code" ? ", copied from its twin: the same code, not timed"
                                                               : "");
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
