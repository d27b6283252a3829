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
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/host.h"
#include "core/roofline.h"
#include "core/task.h"
#include "store/human_records.h"
#include "store/records.h"
#include "store/suite_records.h"

struct sqlite3;

namespace kestrel {

inline constexpr int kSchemaVersion = 12;

class Store {
 public:
  enum class Mode { kReadWrite, kReadOnly, kExisting };

  // Opens (creating it in kReadWrite mode) and migrates the database at `path`.
  // kExisting is kReadWrite on a file that exists: a missing one is NotFound,
  // never created (a writer that only acts on a database a search made).
  // kReadOnly never creates or migrates: a missing file is NotFound, an older
  // schema is refused (Corruption: "open it read-write once"), and every
  // mutating call fails with an Io error. A path that cannot be opened is Io.
  static Result<std::unique_ptr<Store>> Open(const std::filesystem::path& path, Mode mode = Mode::kReadWrite);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Runs `body` in one write transaction: every Store call it makes commits
  // together when it returns success, and none of them does when it returns
  // an error or a commit fails (the error is returned). Calls inside nest as
  // savepoints, so a failed call does not undo the earlier ones by itself.
  Status Atomically(const std::function<Status()>& body);

  // --- tasks, graphs, hosts -------------------------------------------------
  // The task row for task.name, inserted or updated with its current spec
  // (task.spec_text and its SHA-256). A task without a name is InvalidArgument.
  Result<std::int64_t> UpsertTask(const Task& task);
  // The newest graph of the task searched under `definition`
  // (Task::Definition), or a new one when there is none or `fresh`. A graph
  // from before definitions were kept (schema v11) is taken when its
  // task.json is the task's current one. An empty `definition`: the newest
  // graph, whatever its definition. `passed_over`, when given, is set to the
  // newest graph left aside for another definition (0: none). An unknown
  // task_id is NotFound.
  Result<std::int64_t> GraphForTask(std::int64_t task_id, bool fresh, std::string_view definition = {},
                                    std::int64_t* passed_over = nullptr);
  // The host row for host.Key(), inserted or refreshed with the other fields.
  Result<std::int64_t> UpsertHost(const HostInfo& host);
  // In id order.
  Result<std::vector<HostRecord>> ListHosts();
  // Stores a calibration of host `host_id` (NotFound for an unknown host).
  Result<std::int64_t> AddCalibration(std::int64_t host_id, const Calibration& calibration);
  // The newest calibration of the host with `threads` threads, if any.
  Result<std::optional<Calibration>> LatestCalibration(std::int64_t host_id, int threads);

  // --- runs ----------------------------------------------------------------
  // Inserts `run` (id, task_name, evaluations and best_speedup are ignored;
  // started_at 0 means now; host_id 0 means none) and returns its id.
  Result<std::int64_t> CreateRun(const RunRecord& run);
  // Sets status, stop_reason and finished_at (now). NotFound for an unknown run.
  Status FinishRun(std::int64_t run_id, RunStatus status, const std::string& stop_reason);
  // With task_name, evaluations and best_speedup derived. NotFound for an unknown run.
  Result<RunRecord> GetRun(std::int64_t run_id);
  // Newest (latest started_at, then highest id) first.
  Result<std::vector<RunRecord>> ListRuns();
  // Replaces the run's saved engine state (JSON; what `kestrel resume` needs
  // to continue exactly: strategy state, selections made). NotFound for an
  // unknown run.
  Status SaveRunState(std::int64_t run_id, const std::string& state_json);
  // Appends an event stamped now; `detail_json` must be JSON ("" stores {}).
  Status AddRunEvent(std::int64_t run_id, const std::string& kind, const std::string& detail_json);
  // The run's events, oldest first.
  Result<std::vector<RunEventRecord>> RunEvents(std::int64_t run_id);
  // Appends a row of the run's strategy journal (search/strategies/strategy.h):
  // `entries_json`, a JSON array. InvalidArgument when it is not one.
  Status AppendStrategyJournal(std::int64_t run_id, const std::string& entries_json);
  // Replaces the run's journal rows by one (a snapshot of what they said),
  // in one transaction. InvalidArgument when it is not a JSON array.
  Status CompactStrategyJournal(std::int64_t run_id, const std::string& entries_json);
  // The run's journal rows, oldest first.
  Result<std::vector<std::string>> StrategyJournal(std::int64_t run_id);

  // --- sources (content-addressed) ----------------------------------------
  // Stores `text` under its SHA-256 (once) and returns the hash.
  Result<std::string> PutSource(const std::string& text);
  // NotFound for an unknown hash.
  Result<std::string> GetSource(const std::string& hash);

  // --- nodes and edges ------------------------------------------------------
  // Inserts the node (its source stored content-addressed, source_hash and id
  // filled in) and, when given, the edge from its parent, in one transaction.
  // An identity already present in the graph is an InvalidArgument error, an
  // empty identity too. A node with an empty source and a source_hash names
  // an already stored source. parent_edge.child is ignored (the new id is
  // used); created_at 0 means now; run_id 0 means none.
  Result<std::int64_t> AddNode(const NodeRecord& node, const std::optional<EdgeRecord>& parent_edge);
  // Idempotent: an edge with the same (parent, child, kind) is kept as it
  // was. An unknown parent or child is NotFound.
  Status AddEdge(const EdgeRecord& edge);
  // A proposal that was an existing node, in one transaction: a "duplicate"
  // edge parent -> child (none when the proposal repeated its parent itself:
  // no self-edges) and a run event "duplicate" {"parent", "node",
  // "mutation"}, one per proposal, so a run's duplicates can be counted.
  Status RecordDuplicate(const EdgeRecord& edge);
  // One more expansion of the node: a selection of it as a parent that ended
  // (in a proposal, a duplicate or a decline). NotFound for an unknown node.
  Status AddExpansion(std::int64_t node_id);
  // The node of `graph_id` with this identity, if any.
  Result<std::optional<std::int64_t>> FindNode(std::int64_t graph_id, const std::string& identity);
  // Leaves the node's speedup alone. NotFound for an unknown node.
  Status SetNodeStatus(std::int64_t node_id, NodeStatus status, const std::string& reason, const std::string& log);
  // One transaction: the measurement with its per-shape samples, and the
  // node's status, reason, log and (when measured) speedup; a non-measured
  // outcome keeps the node's last measured speedup. NotFound for an unknown
  // node, run or host (run_id / host_id 0 mean none). `purpose`: 'search'
  // (the evaluation that judged the node), or 'hidden_shape' (a later check
  // on hidden shapes that the node failed: it counts for no budget).
  Result<std::int64_t> RecordMeasurement(std::int64_t node_id, std::int64_t run_id, std::int64_t host_id,
                                         const Measurement& measurement, const std::string& purpose = "search");
  // One transaction: the re-measurements of a confirmation round (stored
  // with purpose 'confirm': they count for no evaluation budget) and the
  // confirmation rows (none: re-measurements without a verdict), taken by
  // run_id on host_id (0: none); each re-measured node's speedup becomes the median of
  // all its measured results, which it returns (node -> median; a node with
  // no measured result is absent). NotFound for an unknown node.
  Result<std::map<std::int64_t, double>> RecordConfirmation(
      std::int64_t run_id, std::int64_t host_id, const std::vector<ConfirmationRecord>& confirmations,
      const std::vector<std::pair<std::int64_t, Measurement>>& measurements);
  // --- same code (store_same_code.cc) ---------------------------------------------
  // The node's code fingerprint (BuildResult::code_hash; "" stores NULL:
  // unknown). NotFound for an unknown node.
  Status SetCodeHash(std::int64_t node_id, const std::string& code_hash);
  // The node's code fingerprint; "" when unknown. NotFound for an unknown node.
  Result<std::string> CodeHash(std::int64_t node_id);
  // The twin a node built with `code_hash` need not be timed against: the
  // lowest-id node of the graph, other than `node_id`, with that code hash,
  // status measured, and a timed measured result (purpose 'search') taken on
  // `host_id`; nullopt when there is none (or code_hash is empty).
  Result<std::optional<std::int64_t>> FindSameCode(std::int64_t graph_id, const std::string& code_hash,
                                                   std::int64_t host_id, std::int64_t node_id);
  // One transaction: `measurement` (the twin's result, copied) stored for
  // node_id with purpose 'same_code' (it counts for no evaluation budget,
  // Best does not rank it, a run's evaluations do not count it), the node's
  // status, reason and speedup as RecordMeasurement sets them, and the edge
  // node_id -> twin_id of kind same_code. NotFound for an unknown node.
  Result<std::int64_t> RecordSameCode(std::int64_t node_id, std::int64_t twin_id, std::int64_t run_id,
                                      std::int64_t host_id, const Measurement& measurement);
  // With source text. NotFound for an unknown node.
  Result<NodeRecord> GetNode(std::int64_t node_id);
  // Every node of the graph without source text, in id order.
  Result<std::vector<NodeRecord>> LoadNodes(std::int64_t graph_id);
  // Every edge whose child is in the graph, in insertion order.
  Result<std::vector<EdgeRecord>> LoadEdges(std::int64_t graph_id);
  // A graph's nodes and edges as selection reads them (records.h: GraphBrief):
  // a million nodes in well under a second, where LoadNodes takes many.
  // `on_nodes`, when given, is called (on this thread) as the nodes are
  // read, before the edges are, with each next run of them (run.nodes, their
  // knobs in run.knobs_text, run.source_hashes every source so far) and how
  // many nodes to expect in all (a hint): a caller may build from them while
  // the rest loads. A large graph's come in runs of thousands, a small one's
  // in one. The brief then drops them: the one returned holds no nodes
  // (memory a million nodes would fill twice). It may read the store (a
  // source), not write it.
  using NodesRead = std::function<void(const GraphBrief& run, std::size_t expected)>;
  Result<GraphBrief> LoadGraphBrief(std::int64_t graph_id, const NodesRead& on_nodes = {});
  // Oldest first, with raw samples and mismatches; empty for an unknown node.
  Result<std::vector<MeasurementRecord>> GetMeasurements(std::int64_t node_id);

  // --- queries ---------------------------------------------------------------
  // Measured nodes ranked by the median speedup of their measured
  // measurements passing the filters (BestQuery), then node id, with the
  // count, spread and confirmation of that median; at most query.top rows
  // (top <= 0: all).
  Result<std::vector<BestRow>> Best(const BestQuery& query);

  // --- LLM calls --------------------------------------------------------------
  // Stores every field as given (created_at 0 means now); there is no column
  // for credentials, so nothing but what the record holds is written.
  Result<std::int64_t> AddLlmCall(const LlmCallRecord& call);
  // In id order.
  Result<std::vector<LlmCallRecord>> LlmCallsForNode(std::int64_t node_id);
  // The node's calls with this purpose ("analysis", ...), in id order.
  Result<std::vector<LlmCallRecord>> LlmCallsForNode(std::int64_t node_id, const std::string& purpose);

  // --- profiles (store_profiles.cc) --------------------------------------------
  // Stores a profile of a node taken on a host (host_id / run_id 0: none).
  // NotFound for an unknown node, run or host.
  Result<std::int64_t> AddProfile(const ProfileRecord& profile);
  // The newest profile of the node taken on `host_id` (0: on any host).
  Result<std::optional<ProfileRecord>> LatestProfile(std::int64_t node_id, std::int64_t host_id);

  // --- what the report reads (store_report.cc) --------------------------------
  // The measurements of the graph's nodes, every purpose, oldest first; only
  // those taken by `run_id` unless it is 0.
  Result<std::vector<MeasurementBrief>> GraphMeasurements(std::int64_t graph_id, std::int64_t run_id);
  // The confirmation rounds of the graph's nodes, oldest first; only those of
  // `run_id` unless it is 0.
  Result<std::vector<ConfirmationBrief>> GraphConfirmations(std::int64_t graph_id, std::int64_t run_id);
  // The newest measurement, run event and node ids: cheap, for polling.
  Result<DataVersion> ReadDataVersion();
  // --- human actions (store_human.cc) ------------------------------------------
  // Appends a person's action (id ignored; created_at 0 means now). The node
  // and the run, when given, must belong to action.graph_id: NotFound for an
  // unknown graph, node or run, InvalidArgument for one of another graph, an
  // empty author, or a label that is not a label word.
  Result<std::int64_t> AddHumanAction(const HumanActionRecord& action);
  // The newest action id of the graph (0: none). One index lookup: a running
  // search asks it often to notice new actions.
  Result<std::int64_t> LatestHumanAction(std::int64_t graph_id);
  // The graph's actions with after < id <= upto (upto 0: no bound), oldest first.
  Result<std::vector<HumanActionRecord>> HumanActions(std::int64_t graph_id, std::int64_t after = 0,
                                                      std::int64_t upto = 0);
  // Every action about the node, oldest first.
  Result<std::vector<HumanActionRecord>> NodeActions(std::int64_t node_id);
  // The node's notes, oldest first.
  Result<std::vector<HumanActionRecord>> NodeNotes(std::int64_t node_id);
  // The node's label (its newest label action), if any.
  Result<std::optional<HumanActionRecord>> NodeLabel(std::int64_t node_id);
  // The run's standing instructions as of action `upto` (0: now): its steer
  // actions after its last unsteer, oldest first.
  Result<std::vector<HumanActionRecord>> StandingInstructions(std::int64_t run_id, std::int64_t upto = 0);
  // The graph's nodes whose newest ban/unban (pin/unpin) action with
  // id <= upto (0: no bound) is a ban (a pin), in id order.
  Result<std::vector<std::int64_t>> BannedNodes(std::int64_t graph_id, std::int64_t upto = 0);
  Result<std::vector<std::int64_t>> PinnedNodes(std::int64_t graph_id, std::int64_t upto = 0);
  // The graph's measured results awaiting a person's review (ReviewThresholds),
  // in the order they were first measured; a labelled node is reviewed.
  Result<std::vector<ReviewItem>> ReviewQueue(std::int64_t graph_id, const ReviewThresholds& thresholds);

  // --- the review mode's questions (store_review.cc) ----------------------------
  // Opens a question (id, state, answer ignored; created_at 0 means now).
  // NotFound for an unknown run or parent; InvalidArgument for a parent of
  // another graph.
  Result<std::int64_t> OpenReviewQuestion(const ReviewQuestionRecord& question);
  // NotFound for an unknown id.
  Result<ReviewQuestionRecord> GetReviewQuestion(std::int64_t id);
  // The answer to an open question (accepted, edited, rejected or withdrawn):
  // false, changing nothing, when it was answered or withdrawn before (the
  // first answer wins, from whichever desk); NotFound for an unknown id,
  // InvalidArgument for "open", an empty author, or an edit without text.
  Result<bool> AnswerReviewQuestion(std::int64_t id, ReviewState state, const std::string& answer,
                                    const std::string& author);
  // The open questions, oldest first; only those of `run_id` unless it is 0.
  Result<std::vector<ReviewQuestionRecord>> OpenReviewQuestions(std::int64_t run_id = 0);

  // --- benchmark suites (store_suite.cc) ----------------------------------------
  // Inserts the suite (id, state and times ignored: it starts running now)
  // and its tasks (ids, suite_id and states ignored: pending), in one
  // transaction; returns the suite's id.
  Result<std::int64_t> CreateSuite(const SuiteRecord& suite, const std::vector<SuiteTaskRecord>& tasks);
  // NotFound for an unknown suite.
  Result<SuiteRecord> GetSuite(std::int64_t suite_id);
  // The newest suite (highest id), or with `unfinished` the newest that is
  // not done; nullopt when there is none.
  Result<std::optional<SuiteRecord>> LatestSuite(bool unfinished = false);
  // The suite's tasks in their order.
  Result<std::vector<SuiteTaskRecord>> SuiteTasks(std::int64_t suite_id);
  // The task is running, started now. NotFound for an unknown suite task.
  Status StartSuiteTask(std::int64_t suite_task_id);
  // Records the run a running task searches with (known once the run exists).
  Status SetSuiteTaskRun(std::int64_t suite_task_id, std::int64_t run_id);
  // Ends the task (done, failed or skipped, with why), stamped now.
  Status FinishSuiteTask(std::int64_t suite_task_id, SuiteTaskState state, const std::string& reason);
  // Sets the suite's state; done stamps finished_at.
  Status SetSuiteState(std::int64_t suite_id, SuiteState state);

  // --- maintenance -------------------------------------------------------------
  // PRAGMA integrity_check == "ok".
  Result<bool> IntegrityOk();
  // The file's schema version (kSchemaVersion once opened).
  int SchemaVersion() const { return schema_version_; }

  class Impl;  // store/store_impl.h: the connection; private to store/

 private:
  explicit Store(sqlite3* db);
  std::unique_ptr<Impl> impl_;
  int schema_version_ = 0;
};

}  // namespace kestrel
