#pragma once
// Store: the only code that touches SQLite. One file holds every task, run,
// node, edge, measurement, LLM call, host and run event (docs/SCHEMA.md).
//
// Open() creates or migrates the schema; a file from a newer Kestrel or one
// that is not a Kestrel database is refused with a Corruption error that says so.
// WAL mode, busy_timeout, foreign keys on; prepared statements only.
//
// Thread-safety: a Store is one connection and is not thread-safe; give each
// thread its own Store (several processes and connections may share a file:
// readers work while a run writes). Every mutating call is one transaction.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/host.h"
#include "core/task.h"
#include "store/records.h"

struct sqlite3;

namespace kestrel {

inline constexpr int kSchemaVersion = 1;

class Store {
 public:
  enum class Mode { kReadWrite, kReadOnly };

  // Opens (creating it in kReadWrite mode) and migrates the database at `path`.
  // kReadOnly never creates or migrates: a missing file is NotFound.
  static Result<std::unique_ptr<Store>> Open(const std::filesystem::path& path, Mode mode = Mode::kReadWrite);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // --- tasks, graphs, hosts -------------------------------------------------
  // The task row for task.name, inserted or updated with its current spec.
  Result<std::int64_t> UpsertTask(const Task& task);
  // The newest graph of the task, or a new one when there is none or `fresh`.
  Result<std::int64_t> GraphForTask(std::int64_t task_id, bool fresh);
  Result<std::int64_t> UpsertHost(const HostInfo& host);
  Result<std::vector<HostRecord>> ListHosts();

  // --- runs ----------------------------------------------------------------
  // Inserts `run` (id, evaluations and best_speedup are ignored) and returns its id.
  Result<std::int64_t> CreateRun(const RunRecord& run);
  Status FinishRun(std::int64_t run_id, const std::string& status, const std::string& stop_reason);
  Result<RunRecord> GetRun(std::int64_t run_id);
  // Newest first.
  Result<std::vector<RunRecord>> ListRuns();
  Status AddRunEvent(std::int64_t run_id, const std::string& kind, const std::string& detail_json);

  // --- sources (content-addressed) ----------------------------------------
  // Stores `text` under its SHA-256 (once) and returns the hash.
  Result<std::string> PutSource(const std::string& text);
  Result<std::string> GetSource(const std::string& hash);

  // --- nodes and edges ------------------------------------------------------
  // Inserts the node (its source stored content-addressed, source_hash and id
  // filled in) and, when given, the edge from its parent, in one transaction.
  // An identity already present in the graph is an InvalidArgument error.
  Result<std::int64_t> AddNode(const NodeRecord& node, const std::optional<EdgeRecord>& parent_edge);
  Status AddEdge(const EdgeRecord& edge);
  // The node of `graph_id` with this identity, if any.
  Result<std::optional<std::int64_t>> FindNode(std::int64_t graph_id, const std::string& identity);
  Status SetNodeStatus(std::int64_t node_id, NodeStatus status, const std::string& reason, const std::string& log);
  // One transaction: the measurement with its per-shape samples, and the
  // node's status, reason, log and (when measured) speedup.
  Result<std::int64_t> RecordMeasurement(std::int64_t node_id, std::int64_t run_id, std::int64_t host_id,
                                         const Measurement& measurement);
  // With source text.
  Result<NodeRecord> GetNode(std::int64_t node_id);
  // Every node of the graph without source text, in id order.
  Result<std::vector<NodeRecord>> LoadNodes(std::int64_t graph_id);
  Result<std::vector<EdgeRecord>> LoadEdges(std::int64_t graph_id);
  // Oldest first, with raw samples.
  Result<std::vector<MeasurementRecord>> GetMeasurements(std::int64_t node_id);

  // --- queries ---------------------------------------------------------------
  // Measured nodes ranked by speedup (best measurement per node), filtered.
  Result<std::vector<BestRow>> Best(const BestQuery& query);

  // --- LLM calls --------------------------------------------------------------
  Result<std::int64_t> AddLlmCall(const LlmCallRecord& call);
  Result<std::vector<LlmCallRecord>> LlmCallsForNode(std::int64_t node_id);

  // --- maintenance -------------------------------------------------------------
  // PRAGMA integrity_check == "ok".
  Result<bool> IntegrityOk();
  int SchemaVersion() const { return schema_version_; }

 private:
  explicit Store(sqlite3* db);
  class Impl;
  std::unique_ptr<Impl> impl_;
  int schema_version_ = 0;
};

}  // namespace kestrel
