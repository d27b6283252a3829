#include "store/schema.h"

#include <sqlite3.h>

#include <array>
#include <cstdio>
#include <string>
#include <string_view>

#include "store/statement.h"
#include "store/store.h"

namespace kestrel::store {
namespace {

// v0 -> v1: the first schema. Ids are rowids; an id column that may be
// "none" is nullable (the records' 0). Times are Unix epoch milliseconds.
// JSON columns hold what docs/SCHEMA.md says. Keep in step with that file.
constexpr std::string_view kSchemaV1 = R"sql(
CREATE TABLE tasks (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  spec_json TEXT NOT NULL,
  spec_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE graphs (
  id INTEGER PRIMARY KEY,
  task_id INTEGER NOT NULL REFERENCES tasks(id),
  created_at INTEGER NOT NULL
);
CREATE INDEX graphs_by_task ON graphs(task_id, id);
CREATE TABLE hosts (
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  cpu_model TEXT NOT NULL,
  cores INTEGER NOT NULL,
  isa TEXT NOT NULL,
  l1d_bytes INTEGER NOT NULL,
  l2_bytes INTEGER NOT NULL,
  l3_bytes INTEGER NOT NULL,
  memory_bytes INTEGER NOT NULL,
  os TEXT NOT NULL,
  first_seen INTEGER NOT NULL,
  last_seen INTEGER NOT NULL
);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  task_id INTEGER NOT NULL REFERENCES tasks(id),
  graph_id INTEGER NOT NULL REFERENCES graphs(id),
  host_id INTEGER REFERENCES hosts(id),
  config_json TEXT NOT NULL,
  status TEXT NOT NULL,
  stop_reason TEXT NOT NULL DEFAULT '',
  started_at INTEGER NOT NULL,
  finished_at INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_by_task ON runs(task_id);
CREATE INDEX runs_by_start ON runs(started_at, id);
CREATE TABLE run_events (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  at INTEGER NOT NULL,
  kind TEXT NOT NULL,
  detail_json TEXT NOT NULL
);
CREATE INDEX run_events_by_run ON run_events(run_id, id);
CREATE TABLE sources (
  hash TEXT PRIMARY KEY,
  text TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE nodes (
  id INTEGER PRIMARY KEY,
  graph_id INTEGER NOT NULL REFERENCES graphs(id),
  run_id INTEGER REFERENCES runs(id),
  identity TEXT NOT NULL,
  source_hash TEXT NOT NULL REFERENCES sources(hash),
  knobs_json TEXT NOT NULL,
  toolchain TEXT NOT NULL,
  flags_json TEXT NOT NULL,
  mutation TEXT NOT NULL,
  status TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  log TEXT NOT NULL DEFAULT '',
  speedup REAL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (graph_id, identity)
);
CREATE INDEX nodes_by_graph ON nodes(graph_id, id);
CREATE INDEX nodes_by_run_status ON nodes(run_id, status);
CREATE INDEX nodes_by_status_speedup ON nodes(status, speedup);
CREATE TABLE edges (
  id INTEGER PRIMARY KEY,
  parent_id INTEGER NOT NULL REFERENCES nodes(id),
  child_id INTEGER NOT NULL REFERENCES nodes(id),
  kind TEXT NOT NULL,
  run_id INTEGER REFERENCES runs(id),
  mutation TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (parent_id, child_id, kind)
);
CREATE INDEX edges_by_child ON edges(child_id);
CREATE TABLE measurements (
  id INTEGER PRIMARY KEY,
  node_id INTEGER NOT NULL REFERENCES nodes(id),
  run_id INTEGER REFERENCES runs(id),
  host_id INTEGER REFERENCES hosts(id),
  outcome TEXT NOT NULL,
  reason TEXT NOT NULL,
  log TEXT NOT NULL,
  speedup REAL NOT NULL,
  build_seconds REAL NOT NULL,
  eval_seconds REAL NOT NULL,
  input_sets INTEGER NOT NULL,
  seed INTEGER NOT NULL,
  mismatches_json TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX measurements_by_node ON measurements(node_id, id);
CREATE INDEX measurements_by_outcome ON measurements(outcome, node_id, speedup);
CREATE INDEX measurements_by_run ON measurements(run_id);
CREATE TABLE measurement_shapes (
  measurement_id INTEGER NOT NULL REFERENCES measurements(id),
  shape_index INTEGER NOT NULL,
  shape_json TEXT NOT NULL,
  candidate_samples_json TEXT NOT NULL,
  reference_samples_json TEXT NOT NULL,
  candidate_median REAL NOT NULL,
  candidate_p10 REAL NOT NULL,
  candidate_p90 REAL NOT NULL,
  candidate_spread REAL NOT NULL,
  candidate_count INTEGER NOT NULL,
  reference_median REAL NOT NULL,
  reference_p10 REAL NOT NULL,
  reference_p90 REAL NOT NULL,
  reference_spread REAL NOT NULL,
  reference_count INTEGER NOT NULL,
  speedup REAL NOT NULL,
  gflops REAL NOT NULL,
  gbps REAL NOT NULL,
  PRIMARY KEY (measurement_id, shape_index)
);
CREATE TABLE llm_calls (
  id INTEGER PRIMARY KEY,
  run_id INTEGER REFERENCES runs(id),
  node_id INTEGER REFERENCES nodes(id),
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  prompt_json TEXT NOT NULL,
  response TEXT NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cost_usd REAL NOT NULL,
  latency_s REAL NOT NULL,
  http_status INTEGER NOT NULL,
  retries INTEGER NOT NULL,
  error TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX llm_calls_by_run ON llm_calls(run_id);
CREATE INDEX llm_calls_by_node ON llm_calls(node_id);
)sql";

// v2: the engine's resumable state of a run (strategy state, selections
// made); each host's calibration (roofline); each measurement's fraction of
// the roofline.
constexpr std::string_view kSchemaV2 = R"sql(
ALTER TABLE runs ADD COLUMN state_json TEXT NOT NULL DEFAULT '{}';
ALTER TABLE measurements ADD COLUMN roofline_fraction REAL NOT NULL DEFAULT 0;
ALTER TABLE measurement_shapes ADD COLUMN roofline_fraction REAL NOT NULL DEFAULT 0;
CREATE TABLE calibrations (
  id INTEGER PRIMARY KEY,
  host_id INTEGER NOT NULL REFERENCES hosts(id),
  threads INTEGER NOT NULL,
  peak_gflops REAL NOT NULL,
  l1_gbps REAL NOT NULL,
  l2_gbps REAL NOT NULL,
  l3_gbps REAL NOT NULL,
  dram_gbps REAL NOT NULL,
  seconds REAL NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX calibrations_by_host ON calibrations(host_id, threads, id);
ALTER TABLE measurements ADD COLUMN purpose TEXT NOT NULL DEFAULT 'search';
CREATE TABLE confirmations (
  id INTEGER PRIMARY KEY,
  run_id INTEGER REFERENCES runs(id),
  host_id INTEGER REFERENCES hosts(id),
  node_id INTEGER NOT NULL REFERENCES nodes(id),
  against_id INTEGER REFERENCES nodes(id),
  verdict TEXT NOT NULL,
  node_median REAL NOT NULL,
  against_median REAL NOT NULL,
  noise REAL NOT NULL,
  samples INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX confirmations_by_node ON confirmations(node_id, id);
)sql";

// v3: each measurement's expert-baseline ratio (the task's baseline over the
// reference, timed by the same evaluator); 0 when the task has none.
constexpr std::string_view kSchemaV3 = R"sql(
ALTER TABLE measurements ADD COLUMN baseline_speedup REAL NOT NULL DEFAULT 0;
)sql";

// v4: each node's expansions (Store::AddExpansion), counted by the engine
// when an expansion ends; older files count the derivations each node has,
// which is what the engine counted on load before.
constexpr std::string_view kSchemaV4 = R"sql(
ALTER TABLE nodes ADD COLUMN expansions INTEGER NOT NULL DEFAULT 0;
UPDATE nodes SET expansions = (SELECT count(*) FROM edges e
                               WHERE e.parent_id = nodes.id AND e.kind != 'duplicate' AND e.child_id != e.parent_id);
)sql";

// v5: each node's code fingerprint (BuildResult::code_hash; NULL when
// unknown), looked up per graph to find an already measured node with the
// same code (the `same_code` edge).
constexpr std::string_view kSchemaV5 = R"sql(
ALTER TABLE nodes ADD COLUMN code_hash TEXT;
CREATE INDEX nodes_by_code ON nodes(graph_id, code_hash);
)sql";

// v6: profiles of measured candidates, per node and host (core/profile.h:
// the profile as JSON and its digest), and what each LLM call was for
// (mutate, fix, combine, analysis, plan; calls before v6 were mutations or
// fixes, and are all 'mutate').
constexpr std::string_view kSchemaV6 = R"sql(
CREATE TABLE profiles (
  id INTEGER PRIMARY KEY,
  node_id INTEGER NOT NULL REFERENCES nodes(id),
  host_id INTEGER REFERENCES hosts(id),
  run_id INTEGER REFERENCES runs(id),
  profile_json TEXT NOT NULL,
  digest TEXT NOT NULL,
  seconds REAL NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX profiles_by_node ON profiles(node_id, host_id);
ALTER TABLE llm_calls ADD COLUMN purpose TEXT NOT NULL DEFAULT 'mutate';
CREATE INDEX llm_calls_by_purpose ON llm_calls(node_id, purpose);
)sql";

// v7: what people did to a graph (`kestrel note`, `label`, `steer`, `ban`,
// `pin`, `add`, and the review mode's verdicts), one row per action with its
// author; the engine re-reads them while it runs (store_human.cc). The kinds
// are checked here, so a row no reader understands cannot be written.
constexpr std::string_view kSchemaV7 = R"sql(
CREATE TABLE human_actions (
  id INTEGER PRIMARY KEY,
  graph_id INTEGER NOT NULL REFERENCES graphs(id),
  node_id INTEGER REFERENCES nodes(id),
  run_id INTEGER REFERENCES runs(id),
  kind TEXT NOT NULL CHECK (kind IN ('note', 'label', 'steer', 'unsteer', 'ban', 'unban', 'pin', 'unpin', 'add',
                                     'review_accept', 'review_edit', 'review_reject')),
  text TEXT NOT NULL,
  author TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX human_actions_by_graph ON human_actions(graph_id, id);
CREATE INDEX human_actions_by_node ON human_actions(node_id, id);
)sql";

// v8: the review mode's open questions (`kestrel run --review`): each LLM
// proposal or plan waiting for a person, answered from the terminal or the
// live page, whichever is first (store_review.cc). The verdict itself is
// also a human_actions row, written with the node it made.
constexpr std::string_view kSchemaV8 = R"sql(
CREATE TABLE review_questions (
  id INTEGER PRIMARY KEY,
  graph_id INTEGER NOT NULL REFERENCES graphs(id),
  run_id INTEGER NOT NULL REFERENCES runs(id),
  parent_id INTEGER NOT NULL REFERENCES nodes(id),
  purpose TEXT NOT NULL,
  mutation TEXT NOT NULL,
  text TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('open', 'accepted', 'edited', 'rejected', 'withdrawn')),
  answer TEXT NOT NULL DEFAULT '',
  author TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  answered_at INTEGER
);
CREATE INDEX review_questions_by_state ON review_questions(state, id);
)sql";

// v9: benchmark suites (`kestrel suite`, docs/SUITE.md): a suite is one run
// config applied to a list of tasks in order; each suite task records the run
// that searched it, so a suite killed mid-way resumes that run and goes on.
constexpr std::string_view kSchemaV9 = R"sql(
CREATE TABLE suites (
  id INTEGER PRIMARY KEY,
  selection_json TEXT NOT NULL,
  budget_json TEXT NOT NULL,
  config_json TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('running', 'interrupted', 'done')),
  created_at INTEGER NOT NULL,
  finished_at INTEGER
);
CREATE TABLE suite_tasks (
  id INTEGER PRIMARY KEY,
  suite_id INTEGER NOT NULL REFERENCES suites(id),
  position INTEGER NOT NULL,
  task TEXT NOT NULL,
  level INTEGER NOT NULL,
  run_id INTEGER REFERENCES runs(id),
  state TEXT NOT NULL CHECK (state IN ('pending', 'running', 'done', 'failed', 'skipped')),
  reason TEXT NOT NULL DEFAULT '',
  started_at INTEGER,
  finished_at INTEGER,
  UNIQUE (suite_id, position)
);
)sql";

// v10: a calibration's bandwidth curve (core/roofline.h), [[bytes, gbps], ...];
// '[]' in a row measured before it, which a run measures again.
constexpr std::string_view kSchemaV10 = R"sql(
ALTER TABLE calibrations ADD COLUMN curve_json TEXT NOT NULL DEFAULT '[]';
)sql";

// v11: the strategies' journal (search/strategies/strategy.h): what a run's
// strategy changed of the parts of its state that grow with the graph (the
// exhausted nodes, islands' homes), a row per saved state that changed them,
// so that the state saved with every result stays small.
constexpr std::string_view kSchemaV11 = R"sql(
CREATE TABLE strategy_journal (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  entries_json TEXT NOT NULL
);
CREATE INDEX strategy_journal_by_run ON strategy_journal(run_id, id);
)sql";

// v12: the definition a graph is searched under (Task::Definition: task.json
// and the reference together), so that an edited task searches a graph of
// its own. A graph from before knows only the hash of its task.json as
// last stored: 'task.json:' and that hash, taken while the task is unchanged.
constexpr std::string_view kSchemaV12 = R"sql(
ALTER TABLE graphs ADD COLUMN definition TEXT;
UPDATE graphs SET definition = 'task.json:' || (SELECT t.spec_hash FROM tasks t WHERE t.id = graphs.task_id);
)sql";

// kMigrations[i] takes a file from schema v(i) to v(i+1). Append only: a
// released step never changes.
constexpr std::array<std::string_view, 12> kMigrations = {kSchemaV1, kSchemaV2,  kSchemaV3,  kSchemaV4,
                                                          kSchemaV5, kSchemaV6,  kSchemaV7,  kSchemaV8,
                                                          kSchemaV9, kSchemaV10, kSchemaV11, kSchemaV12};
static_assert(kMigrations.size() == kSchemaVersion, "one migration per schema version");

struct Header {
  std::int64_t application_id = 0;
  std::int64_t user_version = 0;
  std::int64_t tables = 0;
};

Result<std::int64_t> QueryInt(sqlite3* db, std::string_view sql, std::string_view operation) {
  auto statement = Statement::Prepare(db, sql, operation);
  if (!statement) return Fail(statement.error());
  auto row = statement->Step();
  if (!row) return Fail(row.error());
  return *row ? statement->Int(0) : 0;
}

Result<Header> ReadHeader(sqlite3* db) {
  Header header;
  auto id = QueryInt(db, "PRAGMA application_id", "Open");
  if (!id) return Fail(id.error());
  auto version = QueryInt(db, "PRAGMA user_version", "Open");
  if (!version) return Fail(version.error());
  auto tables = QueryInt(db, "SELECT count(*) FROM sqlite_schema", "Open");
  if (!tables) return Fail(tables.error());
  return Header{*id, *version, *tables};
}

std::string Hex(std::int64_t value) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%08x", static_cast<unsigned>(value));
  return text;
}

// Refuses a file that is not ours or too new; `where` is "DB: <path>".
Status CheckHeader(const Header& header, const std::string& where) {
  if (header.application_id != kApplicationId && header.application_id != 0) {
    return Fail(Error::Corruption(where + ": not a Kestrel database (application_id " +
                                  Hex(header.application_id) + ", Kestrel's is " + Hex(kApplicationId) + ")"));
  }
  if (header.application_id == 0 && header.tables > 0) {
    return Fail(Error::Corruption(where + ": not a Kestrel database (it has " + std::to_string(header.tables) +
                                  " schema objects but no Kestrel application_id)"));
  }
  if (header.user_version > kSchemaVersion) {
    return Fail(Error::Corruption(where + ": created by a newer Kestrel (schema v" +
                                  std::to_string(header.user_version) + "); this build reads up to v" +
                                  std::to_string(kSchemaVersion)));
  }
  return {};
}

Status SetPragmas(sqlite3* db, bool read_only) {
  if (!read_only) {
    auto mode = Statement::Prepare(db, "PRAGMA journal_mode=WAL", "Open: journal_mode");
    if (!mode) return Fail(mode.error());
    if (auto run = mode->Run(); !run) return run;
  }
  return ExecScript(db, "PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;", "Open: pragmas");
}

// Applies every migration the file still needs, each in one transaction that
// re-reads the version under the write lock (another process may be first).
Result<int> Migrate(sqlite3* db, const std::string& where) {
  for (;;) {
    auto transaction = Transaction::Begin(db, Transaction::Kind::kWrite, "Open: migrate");
    if (!transaction) return Fail(transaction.error());
    auto header = ReadHeader(db);
    if (!header) return Fail(header.error());
    if (auto ok = CheckHeader(*header, where); !ok) return Fail(ok.error());
    const auto version = static_cast<int>(header->user_version);
    if (version == kSchemaVersion) return version;  // rolls back the empty transaction
    const std::string step = "Open: migrate v" + std::to_string(version) + "->v" + std::to_string(version + 1);
    if (auto applied = ExecScript(db, kMigrations[static_cast<std::size_t>(version)], step); !applied) {
      return Fail(applied.error());
    }
    const std::string stamp = "PRAGMA application_id=" + std::to_string(kApplicationId) +
                              "; PRAGMA user_version=" + std::to_string(version + 1) + ";";
    if (auto stamped = ExecScript(db, stamp, step); !stamped) return Fail(stamped.error());
    if (auto committed = transaction->Commit(); !committed) return Fail(committed.error());
  }
}

}  // namespace

Result<int> PrepareSchema(sqlite3* db, const std::filesystem::path& path, bool read_only) {
  const std::string where = "DB: " + path.string();
  sqlite3_busy_timeout(db, kBusyTimeoutMillis);
  auto header = ReadHeader(db);
  if (!header) {
    if (header.error().code() == ErrorCode::kCorruption) {
      return Fail(Error::Corruption(where + ": not a Kestrel database (not an SQLite file: " +
                                    header.error().message() + ")"));
    }
    return Fail(header.error().WithContext(where));
  }
  // Refuse before touching the file: a foreign database is never switched to WAL.
  if (auto ok = CheckHeader(*header, where); !ok) return Fail(ok.error());
  if (auto set = SetPragmas(db, read_only); !set) return Fail(set.error().WithContext(where));
  if (read_only) {
    if (header->user_version < kSchemaVersion) {
      return Fail(Error::Corruption(where + ": schema v" + std::to_string(header->user_version) +
                                    " is older than this build's v" + std::to_string(kSchemaVersion) +
                                    "; open it read-write once to migrate it"));
    }
    return static_cast<int>(header->user_version);
  }
  if (header->user_version == kSchemaVersion) return kSchemaVersion;
  auto migrated = Migrate(db, where);
  if (!migrated) return Fail(migrated.error().code() == ErrorCode::kCorruption ? migrated.error()
                                                                                 : migrated.error().WithContext(where));
  return migrated;
}

}  // namespace kestrel::store
