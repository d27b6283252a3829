#pragma once
// A tiny task judged by a command evaluator whose bash harness reads markers
// in the kernel (`// fake:speed X`, `// fake:wrong`, `// fake:broken`), so
// that an LLM search of hundreds of expansions stays cheap; and SQL readers
// of a workspace's database. Shared by the LLM tests of the real binary.

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <vector>

#include <doctest.h>
#include <nlohmann/json.hpp>

#include "cli_workspace.h"
#include "tests/cli/corpus_provider.h"

namespace kestrel::testing {

inline constexpr char kMarkerTask[] = R"({
  "name": "prop",
  "description": "y[i] = 2*x[i] + 1, judged by a harness that reads markers",
  "language": "cpp",
  "entry": "axpy",
  "args": [
    {"name": "x", "role": "input", "type": "f32", "shape": ["n"]},
    {"name": "y", "role": "output", "type": "f32", "shape": ["n"]},
    {"name": "n", "role": "dim"}
  ],
  "shapes": [{"n": 1000}],
  "check_shapes": [{"n": 7}],
  "tolerance": {"rtol": 1e-5, "atol": 1e-6},
  "reference": "reference.cpp",
  "seeds": ["seed.cpp"]
})";

inline constexpr char kMarkerReference[] = R"(// fake:reference
#include <cstdint>
void axpy(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;
}
)";

inline constexpr char kMarkerBuild[] = R"(grep -q 'fake:broken' "$1" && { echo "kernel.cpp:2: error: 'broken' was not declared"; exit 1; }
exit 0
)";

// Appends "sha256 knobs" to the log for each candidate it times (not the
// reference), then answers wrong or measured with the marker's speedup.
inline constexpr char kMarkerHarness[] = R"(src=$1; answer=$2; nonce=$3; knobs=$4; log=$5
grep -q 'fake:reference' "$src" || echo "$(sha256sum < "$src" | cut -c1-64) $knobs" >> "$log"
if grep -q 'fake:wrong' "$src"; then
  printf '{"protocol":1,"nonce":"%s","outcome":"wrong","reason":"y[3] is 9, the reference has 7"}' "$nonce" > "$answer"
  exit 0
fi
speed=$(sed -n 's/.*fake:speed \([0-9.]*\).*/\1/p' "$src" | head -n 1)
c=$(awk "BEGIN { printf \"%.9f\", 0.001 / ${speed:-1} }")
printf '{"protocol":1,"nonce":"%s","outcome":"measured","shapes":[{"shape":{"n":1000},"candidate_s":[%s,%s,%s],"reference_s":[0.001,0.001,0.001],"max_abs_error":0,"max_rel_error":0}]}' "$nonce" "$c" "$c" "$c" > "$answer"
)";

// The run config's evaluator for the task: the two scripts above. The
// harness is the tests' witness, not a kernel's host: it appends to
// timed.log in the task's folder, which the run command's sandbox keeps
// read-only (the sandbox has tests of its own: command_sandbox_test), so it
// runs unconfined, by the config's explicit choice.
inline nlohmann::json MarkerEvaluator() {
  return {{"kind", "command"},
          {"sandbox", "none"},
          {"build", {"bash", "{task_dir}/build.sh", "{source}"}},
          {"run", {"bash", "{task_dir}/harness.sh", "{source}", "{answer}", "{nonce}", "{knobs}", "{task_dir}/timed.log"}},
          {"min_time", 0},
          {"min_samples", 3},
          {"timeout_s", 20}};
}

inline void WritePropTask(Workspace& workspace) {
  const auto dir = workspace.tasks() / "prop";
  testing::WriteFile(dir / "task.json", kMarkerTask);
  testing::WriteFile(dir / "reference.cpp", kMarkerReference);
  testing::WriteFile(dir / "seed.cpp", testing::kCorpusSeed);
  testing::WriteFile(dir / "build.sh", kMarkerBuild);
  testing::WriteFile(dir / "harness.sh", kMarkerHarness);
}

// One SQL query's rows as strings, on a read-only connection.
inline std::vector<std::vector<std::string>> Query(const Workspace& workspace, const std::string& sql) {
  std::vector<std::vector<std::string>> rows;
  if (!std::filesystem::exists(workspace.db())) return rows;
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(workspace.db().c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  // The session under test may hold a write lock (a checkpoint, a schema
  // change); a reader waits for it as the product's own readers do.
  sqlite3_busy_timeout(db, 30000);
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
    // A session killed after it created the file but before the schema:
    // nothing is stored yet. Any other failure is the query's.
    const std::string error = sqlite3_errmsg(db);
    sqlite3_close(db);
    REQUIRE_MESSAGE(error.rfind("no such table", 0) == 0, sql << ": " << error);
    return rows;
  }
  int step = SQLITE_ROW;
  while ((step = sqlite3_step(statement)) == SQLITE_ROW) {
    std::vector<std::string> row;
    for (int i = 0; i < sqlite3_column_count(statement); ++i) {
      const auto* text = sqlite3_column_text(statement, i);
      row.push_back(text ? reinterpret_cast<const char*>(text) : "");
    }
    rows.push_back(std::move(row));
  }
  const std::string step_error = step == SQLITE_DONE ? "" : sqlite3_errmsg(db);
  sqlite3_finalize(statement);
  CHECK_MESSAGE(step_error.empty(), sql << ": " << step_error);
  sqlite3_close(db);
  return rows;
}

inline std::int64_t Number(const Workspace& workspace, const std::string& sql) {
  const auto rows = Query(workspace, sql);
  return rows.empty() || rows[0].empty() || rows[0][0].empty() ? 0 : std::stoll(rows[0][0]);
}

}  // namespace kestrel::testing
