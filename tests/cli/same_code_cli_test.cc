// Same code, no second timing, end to end: the real binary, compiler, objdump
// and runner on a task whose seed declares a knob its code never reads. Half
// its configurations are the same code as the other half: a search times
// only one of each pair, and run, runs, best, show, lineage and graph say so.

#include <doctest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_workspace.h"
#include "testing.h"

using namespace kestrel;
using nlohmann::json;

namespace {

using testing::Exec;
using testing::Workspace;

// 3 x 2 configurations; NOTE is never read: 3 codes.
constexpr char kInertSeed[] = R"(// kestrel:knob UNROLL 1 2 4
// kestrel:knob NOTE 0 1
#include <cstdint>
void axpy(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + UNROLL <= n; i += UNROLL) {
    for (int u = 0; u < UNROLL; ++u) y[i + u] = 2.0f * x[i + u] + 1.0f;
  }
  for (; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;
}
)";

json ParseJson(const Exec& exec) {
  try {
    return json::parse(exec.out);
  } catch (const json::exception& error) {
    FAIL("not JSON (" << error.what() << "): " << exec.out << "\nstderr: " << exec.err);
  }
  return {};
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_SUITE("cli same_code") {
  TEST_CASE("a knob the code never reads: one timing per code, same_code edges for the rest") {
    Workspace workspace;
    testing::WriteTask(workspace.tasks(), "affine_inert", kInertSeed);

    const Exec fingerprints = workspace.Run({"eval", "affine_inert", (workspace.tasks() / "affine_inert" / "seed.cpp").string(),
                                             "--sweep", "--fingerprints-only", "--json"});
    INFO("stderr: " << fingerprints.err);
    REQUIRE(fingerprints.code == 0);
    CHECK(Contains(fingerprints.out, R"("distinct_codes":3)"));
    CHECK(Contains(fingerprints.out, R"("same_code":3)"));

    // One candidate in flight: each twin is measured before its copy is built
    // (a copy built while its twin is still being measured is measured too).
    const auto config = workspace.path() / "serial.json";
    testing::WriteFile(config, R"({"task": "affine_inert", "parallel": {"max_in_flight": 1}})");
    const Exec run = workspace.Run({"run", config.string(), "--min-time", "0.01", "--quiet", "--json"});
    INFO("stderr: " << run.err);
    REQUIRE(run.code == 0);
    const json summary = ParseJson(run);
    CHECK(summary.at("stop_reason") == "exhausted");
    CHECK(summary.at("evaluations") == 3);
    CHECK(summary.at("same_code") == 3);
    const json runs = ParseJson(workspace.Run({"runs", "--json"}));
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].at("evaluations") == 3);
    CHECK(runs[0].at("same_code") == 3);
    const Exec text = workspace.Run({"run", "--task", "affine_inert", "--max-evals", "1", "--quiet"});
    CHECK(text.code == 0);  // nothing left: the space is exhausted

    // Every node: three timed, three copies of a timed node with the other NOTE.
    std::map<std::int64_t, std::int64_t> twins;  // copy -> twin
    std::map<std::int64_t, json> nodes;
    for (std::int64_t id = 1; id <= 6; ++id) {
      const json node = ParseJson(workspace.Run({"show", std::to_string(id), "--json"}));
      REQUIRE(node.at("status") == "measured");
      nodes[id] = node;
      if (!node.at("same_code_as").is_null()) twins[id] = node.at("same_code_as").get<std::int64_t>();
    }
    REQUIRE(twins.size() == 3);
    for (const auto& [copy, twin] : twins) {
      CAPTURE(copy);
      const json& c = nodes.at(copy);
      const json& t = nodes.at(twin);
      CHECK(twins.count(twin) == 0);
      CHECK(c.at("knobs").at("UNROLL") == t.at("knobs").at("UNROLL"));
      CHECK(c.at("knobs").at("NOTE") != t.at("knobs").at("NOTE"));
      CHECK(c.at("speedup").get<double>() > 0.0);
      REQUIRE(c.at("measurements").size() == 1);
      CHECK(c.at("measurements")[0].at("purpose") == "same_code");
      bool listed = false;
      for (const json& id : t.at("same_code_copies")) listed = listed || id == copy;
      CHECK(listed);
      const Exec show = workspace.Run({"show", std::to_string(copy)});
      CHECK(Contains(show.out, "same code as"));
      CHECK(Contains(show.out, "copied from its twin"));
      const json steps = ParseJson(workspace.Run({"lineage", std::to_string(copy), "--json"}));
      REQUIRE_FALSE(steps.empty());
      CHECK(steps.front().at("mutation") == "seed:seed.cpp");
      CHECK(steps.back().at("node") == copy);
      CHECK(steps.back().at("same_code_as") == twin);
      const Exec lineage = workspace.Run({"lineage", std::to_string(copy)});
      CHECK(Contains(lineage.out, "same code as node " + std::to_string(twin)));
    }
    // best ranks the timed nodes only.
    const json best = ParseJson(workspace.Run({"best", "--task", "affine_inert", "--json"}));
    CHECK(best.size() == 3);
    for (const json& row : best) CHECK(twins.count(row.at("node").get<std::int64_t>()) == 0);
    const Exec dot = workspace.Run({"graph", "--format", "dot"});
    CHECK(Contains(dot.out, "same code"));
  }
}
