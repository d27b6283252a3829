#pragma once
// A node whose source, mutation, reason, log and LLM exchange try to end the
// report's markup (`</script><img onerror=...>`): the report must show them
// as text.

#include <doctest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "store/store.h"

namespace kestrel::testing {

inline constexpr char kHostile[] = "</script><img src=x onerror=alert(1)>\"'&";
// kHostile as the page must carry it.
inline constexpr char kHostileEscaped[] = "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;";

// Adds the hostile node to the newest run's graph of `db`, made from its first node; returns its id.
inline std::int64_t AddHostileNode(const std::filesystem::path& db) {
  auto store = Store::Open(db);
  REQUIRE(store);
  auto runs = (*store)->ListRuns();
  REQUIRE(runs);
  REQUIRE(!runs->empty());
  const RunRecord& run = runs->front();
  auto nodes = (*store)->LoadNodes(run.graph_id);
  REQUIRE(nodes);
  NodeRecord node = NewNodeRecord({std::string("// ") + kHostile + "\n", {}, "c++", {}}, run.graph_id, run.id,
                                  std::string("llm: ") + kHostile);
  EdgeRecord edge{nodes->front().id, 0, EdgeKind::kDerive, run.id, kHostile, 0};
  auto id = (*store)->AddNode(node, edge);
  REQUIRE(id);
  REQUIRE((*store)->SetNodeStatus(*id, NodeStatus::kWrong, kHostile, kHostile));
  LlmCallRecord call;
  call.run_id = run.id;
  call.node_id = *id;
  call.provider = "openai";
  call.model = kHostile;
  call.prompt = nlohmann::json::array({{{"role", "user"}, {"content", kHostile}}}).dump();
  call.response = kHostile;
  REQUIRE((*store)->AddLlmCall(call));
  call.purpose = "analysis";  // and the analyst's reading of it, which the page shows read
  call.response = nlohmann::json{{"bottlenecks", {{{"name", kHostile}, {"evidence", kHostile}}}},
                                 {"recommendations", {{{"change", kHostile}, {"expected_gain", kHostile}}}}}
                      .dump();
  REQUIRE((*store)->AddLlmCall(call));
  return *id;
}

}  // namespace kestrel::testing
