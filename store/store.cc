// Store: opening, tasks, graphs, hosts, runs, sources, LLM calls and
// maintenance. Nodes, edges, measurements and queries are in store_nodes.cc.
#include "store/store.h"

#include <sqlite3.h>

#include <array>
#include <system_error>

#include "core/hash.h"
#include "store/codec.h"
#include "store/schema.h"
#include "store/store_impl.h"

namespace kestrel {
namespace {

constexpr std::string_view kSelectRun = R"sql(
SELECT r.id, r.task_id, t.name, r.graph_id, r.host_id, r.config_json, r.status, r.stop_reason,
       r.started_at, r.finished_at,
       (SELECT count(*) FROM measurements m WHERE m.run_id = r.id AND m.purpose = 'search'),
       (SELECT max(n.speedup) FROM nodes n
        WHERE n.id IN (SELECT m.node_id FROM measurements m
                       WHERE m.run_id = r.id AND m.outcome = 'measured' AND m.purpose <> 'same_code')
          AND n.status = 'measured'  -- as Best(): not a node a hidden shape found wrong, nor a same-code copy
          AND coalesce((SELECT c.verdict FROM confirmations c WHERE c.node_id = n.id ORDER BY c.id DESC LIMIT 1),
                       '') <> 'unstable'),
       r.state_json,
       (SELECT total(c.cost_usd) FROM llm_calls c WHERE c.run_id = r.id),
       (SELECT count(*) FROM measurements m WHERE m.run_id = r.id AND m.purpose = 'same_code')
FROM runs r JOIN tasks t ON t.id = r.task_id
)sql";

Result<RunRecord> ReadRun(const store::Statement& row) {
  RunRecord run;
  run.id = row.Int(0);
  run.task_id = row.Int(1);
  run.task_name = row.Text(2);
  run.graph_id = row.Int(3);
  run.host_id = row.Int(4);
  run.config_json = row.Text(5);
  const std::string status = row.Text(6);
  const auto parsed = ParseRunStatus(status);
  if (!parsed) {
    return Fail(Error::Corruption("DB: run " + std::to_string(run.id) + " has unknown status '" + status + "'"));
  }
  run.status = *parsed;
  run.stop_reason = row.Text(7);
  run.started_at = row.Int(8);
  run.finished_at = row.Int(9);
  run.evaluations = row.Int(10);
  run.best_speedup = row.OptionalDouble(11);
  run.state_json = row.Text(12);
  run.llm_usd = row.Double(13);
  run.same_code = row.Int(14);
  return run;
}

std::int64_t OrNow(std::int64_t millis) { return millis != 0 ? millis : NowMillis(); }

}  // namespace

// --- opening ------------------------------------------------------------------

Store::Store(sqlite3* db) : impl_(std::make_unique<Impl>(db)) {}

Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::Open(const std::filesystem::path& path, Mode mode) {
  const bool read_only = mode == Mode::kReadOnly;
  const bool create = mode == Mode::kReadWrite;
  std::error_code error;
  if (!create && !std::filesystem::exists(path, error)) {
    return Fail(Error::NotFound("DB: " + path.string() + ": no such database file"));
  }
  const int flags = SQLITE_OPEN_NOMUTEX | (read_only ? SQLITE_OPEN_READONLY
                                                     : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0));
  sqlite3* db = nullptr;
  if (const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr); rc != SQLITE_OK) {
    const std::string why = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return Fail(Error::Io("DB: " + path.string() + ": cannot open: " + why));
  }
  sqlite3_extended_result_codes(db, 1);
  std::unique_ptr<Store> store(new Store(db));  // owns `db` from here on
  auto version = store::PrepareSchema(db, path, read_only);
  if (!version) return Fail(version.error());
  store->schema_version_ = *version;
  return store;
}

// --- tasks, graphs, hosts ---------------------------------------------------------

Result<std::int64_t> Store::UpsertTask(const Task& task) {
  constexpr std::string_view kOp = "UpsertTask";
  if (task.name.empty()) return Fail(Error::InvalidArgument("DB: UpsertTask: the task has no name"));
  auto transaction = impl_->BeginWrite(kOp);
  if (!transaction) return Fail(transaction.error());
  {
    auto upsert = impl_->Prepare(kOp, R"sql(
      INSERT INTO tasks (name, spec_json, spec_hash, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4)
      ON CONFLICT (name) DO UPDATE SET spec_json = excluded.spec_json, spec_hash = excluded.spec_hash,
                                       updated_at = excluded.updated_at
      WHERE spec_hash <> excluded.spec_hash)sql");
    if (!upsert) return Fail(upsert.error());
    (*upsert)->Bind(1, task.name).Bind(2, task.spec_text).Bind(3, Sha256Hex(task.spec_text)).Bind(4, NowMillis());
    if (auto done = (*upsert)->Run(); !done) return Fail(done.error());
  }
  std::int64_t id = 0;
  {
    auto select = impl_->Prepare(kOp, "SELECT id FROM tasks WHERE name = ?1");
    if (!select) return Fail(select.error());
    (*select)->Bind(1, task.name);
    auto row = (*select)->Step();
    if (!row) return Fail(row.error());
    if (!*row) return Fail(Error::Internal("DB: UpsertTask: the task row vanished"));
    id = (*select)->Int(0);
  }  // the statement is reset before COMMIT
  if (auto committed = transaction->Commit(); !committed) return Fail(committed.error());
  return id;
}

Result<std::int64_t> Store::GraphForTask(std::int64_t task_id, bool fresh, std::string_view definition,
                                         std::int64_t* passed_over) {
  constexpr std::string_view kOp = "GraphForTask";
  if (passed_over != nullptr) *passed_over = 0;
  auto transaction = impl_->BeginWrite(kOp);
  if (!transaction) return Fail(transaction.error());
  if (!fresh) {
    // Newest first; a graph of schema v11 knows only its task.json's hash
    // ("task.json:" and tasks.spec_hash as it was then), one made without a
    // definition nothing.
    auto graphs = impl_->Prepare(kOp, R"sql(
      SELECT g.id, g.definition, g.definition IS NULL OR g.definition = 'task.json:' || t.spec_hash
      FROM graphs g JOIN tasks t ON t.id = g.task_id WHERE g.task_id = ?1 ORDER BY g.id DESC)sql");
    if (!graphs) return Fail(graphs.error());
    (*graphs)->Bind(1, task_id);
    std::optional<std::int64_t> chosen;
    bool adopt = false;
    for (;;) {
      auto row = (*graphs)->Step();
      if (!row) return Fail(row.error());
      if (!*row) break;
      const std::int64_t id = (*graphs)->Int(0);
      if (definition.empty() || (*graphs)->Text(1) == definition) {
        chosen = id;
        break;
      }
      if ((*graphs)->Int(2) != 0) {
        chosen = id;
        adopt = true;
        break;
      }
      if (passed_over != nullptr && *passed_over == 0) *passed_over = id;
    }
    (*graphs)->Reset();
    if (chosen && !adopt) return *chosen;  // nothing written: the rollback is a no-op
    if (chosen) {
      auto adopted = impl_->Prepare(kOp, "UPDATE graphs SET definition = ?2 WHERE id = ?1");
      if (!adopted) return Fail(adopted.error());
      (*adopted)->Bind(1, *chosen).Bind(2, definition);
      if (auto done = (*adopted)->Run(); !done) return Fail(done.error());
      if (auto committed = transaction->Commit(); !committed) return Fail(committed.error());
      return *chosen;
    }
  }
  auto insert = impl_->Prepare(kOp, "INSERT INTO graphs (task_id, created_at, definition) VALUES (?1, ?2, ?3)");
  if (!insert) return Fail(insert.error());
  (*insert)->Bind(1, task_id).Bind(2, NowMillis());
  if (definition.empty()) {
    (*insert)->Bind(3, std::optional<std::string>());
  } else {
    (*insert)->Bind(3, definition);
  }
  if (auto done = (*insert)->Run(); !done) return Fail(done.error());
  const std::int64_t id = impl_->LastInsertId();
  if (auto committed = transaction->Commit(); !committed) return Fail(committed.error());
  return id;
}

Result<std::int64_t> Store::UpsertHost(const HostInfo& host) {
  constexpr std::string_view kOp = "UpsertHost";
  auto transaction = impl_->BeginWrite(kOp);
  if (!transaction) return Fail(transaction.error());
  {
    auto upsert = impl_->Prepare(kOp, R"sql(
      INSERT INTO hosts (key, name, cpu_model, cores, isa, l1d_bytes, l2_bytes, l3_bytes, memory_bytes, os,
                         first_seen, last_seen)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11)
      ON CONFLICT (key) DO UPDATE SET cores = excluded.cores, isa = excluded.isa, l1d_bytes = excluded.l1d_bytes,
        l2_bytes = excluded.l2_bytes, l3_bytes = excluded.l3_bytes, memory_bytes = excluded.memory_bytes,
        os = excluded.os, last_seen = excluded.last_seen)sql");
    if (!upsert) return Fail(upsert.error());
    (*upsert)->Bind(1, host.Key()).Bind(2, host.name).Bind(3, host.cpu_model).Bind(4, host.cores).Bind(5, host.isa);
    (*upsert)->Bind(6, host.l1d_bytes).Bind(7, host.l2_bytes).Bind(8, host.l3_bytes).Bind(9, host.memory_bytes);
    (*upsert)->Bind(10, host.os).Bind(11, NowMillis());
    if (auto done = (*upsert)->Run(); !done) return Fail(done.error());
  }
  std::int64_t id = 0;
  {
    auto select = impl_->Prepare(kOp, "SELECT id FROM hosts WHERE key = ?1");
    if (!select) return Fail(select.error());
    (*select)->Bind(1, host.Key());
    auto row = (*select)->Step();
    if (!row) return Fail(row.error());
    if (!*row) return Fail(Error::Internal("DB: UpsertHost: the host row vanished"));
    id = (*select)->Int(0);
  }  // the statement is reset before COMMIT
  if (auto committed = transaction->Commit(); !committed) return Fail(committed.error());
  return id;
}

Result<std::vector<HostRecord>> Store::ListHosts() {
  auto select = impl_->Prepare("ListHosts", R"sql(
    SELECT id, name, cpu_model, cores, isa, l1d_bytes, l2_bytes, l3_bytes, memory_bytes, os FROM hosts ORDER BY id)sql");
  if (!select) return Fail(select.error());
  std::vector<HostRecord> hosts;
  for (;;) {
    auto row = (*select)->Step();
    if (!row) return Fail(row.error());
    if (!*row) return hosts;
    const store::Statement& r = **select;
    HostRecord host;
    host.id = r.Int(0);
    host.info.name = r.Text(1);
    host.info.cpu_model = r.Text(2);
    host.info.cores = static_cast<int>(r.Int(3));
    host.info.isa = r.Text(4);
    host.info.l1d_bytes = r.Int(5);
    host.info.l2_bytes = r.Int(6);
    host.info.l3_bytes = r.Int(7);
    host.info.memory_bytes = r.Int(8);
    host.info.os = r.Text(9);
    hosts.push_back(std::move(host));
  }
}

Result<std::int64_t> Store::AddCalibration(std::int64_t host_id, const Calibration& calibration) {
  constexpr std::string_view kOp = "AddCalibration";
  auto transaction = impl_->BeginWrite(kOp);
  if (!transaction) return Fail(transaction.error());
  {
    auto host = impl_->Prepare(kOp, "SELECT 1 FROM hosts WHERE id = ?1");
    if (!host) return Fail(host.error());
    (*host)->Bind(1, host_id);
    auto row = (*host)->Step();
    if (!row) return Fail(row.error());
    if (!*row) return Fail(Error::NotFound("DB: AddCalibration: no host " + std::to_string(host_id)));
  }
  auto insert = impl_->Prepare(kOp, R"sql(
    INSERT INTO calibrations (host_id, threads, peak_gflops, l1_gbps, l2_gbps, l3_gbps, dram_gbps, seconds, created_at,
                              curve_json)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10))sql");
  if (!insert) return Fail(insert.error());
  (*insert)->Bind(1, host_id).Bind(2, calibration.threads).Bind(3, calibration.peak_gflops);
  (*insert)->Bind(4, calibration.l1_gbps).Bind(5, calibration.l2_gbps).Bind(6, calibration.l3_gbps);
  (*insert)->Bind(7, calibration.dram_gbps).Bind(8, calibration.seconds).Bind(9, NowMillis());
  (*insert)->Bind(10, CurveJson(calibration.curve));
  if (auto done = (*insert)->Run(); !done) return Fail(done.error());
  const std::int64_t id = impl_->LastInsertId();
  if (auto committed = transaction->Commit(); !committed) return Fail(committed.error());
  return id;
}

Result<std::optional<Calibration>> Store::LatestCalibration(std::int64_t host_id, int threads) {
  auto select = impl_->Prepare("LatestCalibration", R"sql(
    SELECT threads, peak_gflops, l1_gbps, l2_gbps, l3_gbps, dram_gbps, seconds, curve_json FROM calibrations
    WHERE host_id = ?1 AND threads = ?2 ORDER BY id DESC LIMIT 1)sql");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, host_id).Bind(2, threads);
  auto row = (*select)->Step();
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<Calibration>();
  const store::Statement& r = **select;
  Calibration calibration;
  calibration.threads = static_cast<int>(r.Int(0));
  calibration.peak_gflops = r.Double(1);
  calibration.l1_gbps = r.Double(2);
  calibration.l2_gbps = r.Double(3);
  calibration.l3_gbps = r.Double(4);
  calibration.dram_gbps = r.Double(5);
  calibration.seconds = r.Double(6);
  auto curve = ParseCurveJson(r.Text(7));
  if (!curve) return Fail(curve.error().WithContext("DB: LatestCalibration"));
  calibration.curve = std::move(*curve);
  return std::optional<Calibration>(calibration);
}

// --- runs -------------------------------------------------------------------------

Result<std::int64_t> Store::CreateRun(const RunRecord& run) {
  constexpr std::string_view kOp = "CreateRun";
  auto transaction = impl_->BeginWrite(kOp);
  if (!transaction) return Fail(transaction.error());
  auto insert = impl_->Prepare(kOp, R"sql(
    INSERT INTO runs (task_id, graph_id, host_id, config_json, status, stop_reason, started_at, finished_at)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8))sql");
  if (!insert) return Fail(insert.error());
  (*insert)->Bind(1, run.task_id).Bind(2, run.graph_id).BindId(3, run.host_id).Bind(4, run.config_json);
  (*insert)->Bind(5, std::string(ToString(run.status))).Bind(6, run.stop_reason).Bind(7, OrNow(run.started_at)).Bind(8, run.finished_at);
  if (auto done = (*insert)->Run(); !done) return Fail(done.error());
  const std::int64_t id = impl_->LastInsertId();
  if (auto committed = transaction->Commit(); !committed) return Fail(committed.error());
  return id;
}

Status Store::FinishRun(std::int64_t run_id, RunStatus status, const std::string& stop_reason) {
  constexpr std::string_view kOp = "FinishRun";
  auto transaction = impl_->BeginWrite(kOp);
  if (!transaction) return Fail(transaction.error());
  auto update = impl_->Prepare(kOp, "UPDATE runs SET status = ?2, stop_reason = ?3, finished_at = ?4 WHERE id = ?1");
  if (!update) return Fail(update.error());
  (*update)->Bind(1, run_id).Bind(2, std::string(ToString(status))).Bind(3, stop_reason);
  (*update)->Bind(4, status == RunStatus::kRunning ? 0 : NowMillis());
  if (auto done = (*update)->Run(); !done) return done;
  if (impl_->Changes() == 0) return Fail(Error::NotFound("DB: FinishRun: no run " + std::to_string(run_id)));
  return transaction->Commit();
}

Status Store::Atomically(const std::function<Status()>& body) {
  auto transaction = impl_->BeginWrite("Atomically");
  if (!transaction) return Fail(transaction.error());
  if (auto done = body(); !done) return done;
  return transaction->Commit();
}

Status Store::SaveRunState(std::int64_t run_id, const std::string& state_json) {
  constexpr std::string_view kOp = "SaveRunState";
  auto update = impl_->Prepare(kOp, "UPDATE runs SET state_json = ?2 WHERE id = ?1");
  if (!update) return Fail(update.error());
  (*update)->Bind(1, run_id).Bind(2, state_json);
  if (auto done = (*update)->Run(); !done) return done;
  if (impl_->Changes() == 0) return Fail(Error::NotFound("DB: SaveRunState: no run " + std::to_string(run_id)));
  return {};
}

Result<RunRecord> Store::GetRun(std::int64_t run_id) {
  auto select = impl_->Prepare("GetRun", std::string(kSelectRun) + " WHERE r.id = ?1");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, run_id);
  auto row = (*select)->Step();
  if (!row) return Fail(row.error());
  if (!*row) return Fail(Error::NotFound("DB: no run " + std::to_string(run_id)));
  return ReadRun(**select);
}

Result<std::vector<RunRecord>> Store::ListRuns() {
  auto select = impl_->Prepare("ListRuns", std::string(kSelectRun) + " ORDER BY r.started_at DESC, r.id DESC");
  if (!select) return Fail(select.error());
  std::vector<RunRecord> runs;
  for (;;) {
    auto row = (*select)->Step();
    if (!row) return Fail(row.error());
    if (!*row) return runs;
    auto run = ReadRun(**select);
    if (!run) return Fail(run.error());
    runs.push_back(std::move(*run));
  }
}

Result<std::vector<RunEventRecord>> Store::RunEvents(std::int64_t run_id) {
  auto select = impl_->Prepare(
      "RunEvents", "SELECT id, run_id, at, kind, detail_json FROM run_events WHERE run_id = ?1 ORDER BY id");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, run_id);
  std::vector<RunEventRecord> events;
  for (;;) {
    auto row = (*select)->Step();
    if (!row) return Fail(row.error());
    if (!*row) return events;
    const store::Statement& event = **select;
    events.push_back({event.Int(0), event.Int(1), event.Int(2), event.Text(3), event.Text(4)});
  }
}

Status Store::AppendStrategyJournal(std::int64_t run_id, const std::string& entries_json) {
  constexpr std::string_view kOp = "AppendStrategyJournal";
  if (entries_json.empty() || entries_json.front() != '[' || !store::IsJson(entries_json)) {
    return Fail(Error::InvalidArgument("DB: AppendStrategyJournal: the entries are not a JSON array"));
  }
  auto transaction = impl_->BeginWrite(kOp);
  if (!transaction) return Fail(transaction.error());
  auto insert = impl_->Prepare(kOp, "INSERT INTO strategy_journal (run_id, entries_json) VALUES (?1, ?2)");
  if (!insert) return Fail(insert.error());
  (*insert)->Bind(1, run_id).Bind(2, entries_json);
  if (auto done = (*insert)->Run(); !done) return done;
  return transaction->Commit();
}

Status Store::CompactStrategyJournal(std::int64_t run_id, const std::string& entries_json) {
  constexpr std::string_view kOp = "CompactStrategyJournal";
  auto transaction = impl_->BeginWrite(kOp);
  if (!transaction) return Fail(transaction.error());
  auto remove = impl_->Prepare(kOp, "DELETE FROM strategy_journal WHERE run_id = ?1");
  if (!remove) return Fail(remove.error());
  (*remove)->Bind(1, run_id);
  if (auto done = (*remove)->Run(); !done) return done;
  // Checks the entries; a refusal rolls the deletion back.
  if (auto appended = AppendStrategyJournal(run_id, entries_json); !appended) return appended;
  return transaction->Commit();
}

Result<std::vector<std::string>> Store::StrategyJournal(std::int64_t run_id) {
  auto select = impl_->Prepare("StrategyJournal",
                               "SELECT entries_json FROM strategy_journal WHERE run_id = ?1 ORDER BY id");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, run_id);
  std::vector<std::string> rows;
  for (;;) {
    auto row = (*select)->Step();
    if (!row) return Fail(row.error());
    if (!*row) return rows;
    rows.push_back((*select)->Text(0));
  }
}

Status Store::AddRunEvent(std::int64_t run_id, const std::string& kind, const std::string& detail_json) {
  constexpr std::string_view kOp = "AddRunEvent";
  const std::string detail = detail_json.empty() ? "{}" : detail_json;
  if (!store::IsJson(detail)) {
    return Fail(Error::InvalidArgument("DB: AddRunEvent: the detail of event '" + kind + "' is not JSON"));
  }
  auto transaction = impl_->BeginWrite(kOp);
  if (!transaction) return Fail(transaction.error());
  auto insert = impl_->Prepare(kOp, "INSERT INTO run_events (run_id, at, kind, detail_json) VALUES (?1, ?2, ?3, ?4)");
  if (!insert) return Fail(insert.error());
  (*insert)->Bind(1, run_id).Bind(2, NowMillis()).Bind(3, kind).Bind(4, detail);
  if (auto done = (*insert)->Run(); !done) return done;
  return transaction->Commit();
}

// --- sources ------------------------------------------------------------------------

Result<std::string> Store::Impl::PutSourceInTransaction(const std::string& text) {
  std::string hash = Sha256Hex(text);
  auto insert = Prepare("PutSource", "INSERT OR IGNORE INTO sources (hash, text, created_at) VALUES (?1, ?2, ?3)");
  if (!insert) return Fail(insert.error());
  (*insert)->Bind(1, hash).Bind(2, text).Bind(3, NowMillis());
  if (auto done = (*insert)->Run(); !done) return Fail(done.error());
  return hash;
}

Result<std::string> Store::PutSource(const std::string& text) {
  auto transaction = impl_->BeginWrite("PutSource");
  if (!transaction) return Fail(transaction.error());
  auto hash = impl_->PutSourceInTransaction(text);
  if (!hash) return hash;
  if (auto committed = transaction->Commit(); !committed) return Fail(committed.error());
  return hash;
}

Result<std::string> Store::GetSource(const std::string& hash) {
  auto select = impl_->Prepare("GetSource", "SELECT text FROM sources WHERE hash = ?1");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, hash);
  auto row = (*select)->Step();
  if (!row) return Fail(row.error());
  if (!*row) return Fail(Error::NotFound("DB: no source " + hash));
  return (*select)->Text(0);
}

// --- LLM calls ------------------------------------------------------------------------

Result<std::int64_t> Store::AddLlmCall(const LlmCallRecord& call) {
  constexpr std::string_view kOp = "AddLlmCall";
  auto transaction = impl_->BeginWrite(kOp);
  if (!transaction) return Fail(transaction.error());
  auto insert = impl_->Prepare(kOp, R"sql(
    INSERT INTO llm_calls (run_id, node_id, provider, model, prompt_json, response, input_tokens, output_tokens,
                           cost_usd, latency_s, http_status, retries, error, created_at, purpose)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15))sql");
  if (!insert) return Fail(insert.error());
  store::Statement& s = **insert;
  s.BindId(1, call.run_id).Bind(2, call.node_id).Bind(3, call.provider).Bind(4, call.model).Bind(5, call.prompt);
  s.Bind(6, call.response).Bind(7, call.input_tokens).Bind(8, call.output_tokens).Bind(9, call.cost_usd);
  s.Bind(10, call.latency_s).Bind(11, call.http_status).Bind(12, call.retries).Bind(13, call.error);
  s.Bind(14, OrNow(call.created_at)).Bind(15, call.purpose.empty() ? std::string("mutate") : call.purpose);
  if (auto done = s.Run(); !done) return Fail(done.error());
  const std::int64_t id = impl_->LastInsertId();
  if (auto committed = transaction->Commit(); !committed) return Fail(committed.error());
  return id;
}

Result<std::vector<LlmCallRecord>> Store::LlmCallsForNode(std::int64_t node_id) { return LlmCallsForNode(node_id, ""); }

Result<std::vector<LlmCallRecord>> Store::LlmCallsForNode(std::int64_t node_id, const std::string& purpose) {
  auto select = impl_->Prepare("LlmCallsForNode", R"sql(
    SELECT id, run_id, node_id, provider, model, prompt_json, response, input_tokens, output_tokens, cost_usd,
           latency_s, http_status, retries, error, created_at, purpose
    FROM llm_calls WHERE node_id = ?1 AND (?2 = '' OR purpose = ?2) ORDER BY id)sql");
  if (!select) return Fail(select.error());
  (*select)->Bind(1, node_id).Bind(2, purpose);
  std::vector<LlmCallRecord> calls;
  for (;;) {
    auto row = (*select)->Step();
    if (!row) return Fail(row.error());
    if (!*row) return calls;
    const store::Statement& r = **select;
    LlmCallRecord call;
    call.id = r.Int(0);
    call.run_id = r.Int(1);
    if (!r.IsNull(2)) call.node_id = r.Int(2);
    call.provider = r.Text(3);
    call.model = r.Text(4);
    call.prompt = r.Text(5);
    call.response = r.Text(6);
    call.input_tokens = r.Int(7);
    call.output_tokens = r.Int(8);
    call.cost_usd = r.Double(9);
    call.latency_s = r.Double(10);
    call.http_status = static_cast<int>(r.Int(11));
    call.retries = static_cast<int>(r.Int(12));
    call.error = r.Text(13);
    call.created_at = r.Int(14);
    call.purpose = r.Text(15);
    calls.push_back(std::move(call));
  }
}

// --- maintenance -------------------------------------------------------------------------

Result<bool> Store::IntegrityOk() {
  auto check = impl_->Prepare("IntegrityOk", "PRAGMA integrity_check");
  if (!check) return Fail(check.error());
  auto row = (*check)->Step();
  if (!row) return Fail(row.error());
  return *row && (*check)->Text(0) == "ok";
}

}  // namespace kestrel
