#pragma once
// Plain rows as the Store reads and writes them. Times are Unix epoch
// milliseconds (UTC). Ids are SQLite rowids, stable for the life of the file.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/candidate.h"
#include "core/edge_kind.h"
#include "core/host.h"
#include "core/measurement.h"
#include "core/outcome.h"

namespace kestrel {

std::int64_t NowMillis();

// Where a run is: running (or killed while it ran), finished (a budget or
// exhaustion ended it), interrupted (a signal), failed (an error stopped it).
enum class RunStatus { kRunning, kFinished, kInterrupted, kFailed };
std::string_view ToString(RunStatus status);
std::optional<RunStatus> ParseRunStatus(std::string_view text);

struct RunRecord {
  std::int64_t id = 0;
  std::int64_t task_id = 0;
  std::string task_name;
  std::int64_t graph_id = 0;
  std::int64_t host_id = 0;
  std::string config_json;  // the effective run config (API keys are never in it)
  RunStatus status = RunStatus::kRunning;
  std::string stop_reason;         // "time", "evaluations", "plateau", "signal", "exhausted", ...
  std::int64_t started_at = 0;
  std::int64_t finished_at = 0;  // 0 while running
  std::string state_json = "{}";  // the engine's resumable state (SaveRunState)
  // Derived when read:
  std::int64_t evaluations = 0;               // evaluations this run recorded (re-measurements not counted)
  std::optional<double> best_speedup;         // highest speedup (median) of the nodes this run measured, unstable ones aside
  double llm_usd = 0.0;                       // cost of this run's LLM calls
  std::int64_t same_code = 0;                 // nodes it did not time: the same code as a measured node (same_code edges)
};

// Something that happened to a run: "start", "stop", "new_best", ...
struct RunEventRecord {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  std::int64_t at = 0;
  std::string kind;
  std::string detail_json;
};

// A node of a task's search graph: one candidate.
struct NodeRecord {
  std::int64_t id = 0;
  std::int64_t graph_id = 0;
  std::int64_t run_id = 0;  // the run that proposed it
  std::string identity;     // Candidate::Identity()
  std::string source_hash;  // key into the content-addressed sources
  std::string source;       // filled by GetNode and AddNode's input; empty from LoadNodes
  KnobValues knobs;
  std::string toolchain;
  std::vector<std::string> flags;
  std::string mutation;  // how it was made: "seed:seed.cpp", "knob UNROLL 2->4", ...
  NodeStatus status = NodeStatus::kProposed;
  std::string reason;  // short reason of the final status
  std::string log;     // compiler / runner log of the final status (trimmed)
  // Latest measured speedup (any host); nullopt until a measurement is
  // measured. Kept when a later measurement is not (status then says so).
  std::optional<double> speedup;
  // Times the search chose it as a parent and the expansion ended (a
  // proposal, a duplicate or a decline): what graph-ucb's e(n) counts.
  std::int64_t expansions = 0;
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;

  Candidate ToCandidate() const { return {source, knobs, toolchain, flags}; }
};

// The row of a new node of `graph_id` holding `candidate`, made by `run_id`
// (0: none) by `mutation` ("seed:NAME", "knob UNROLL 2->4", ...).
NodeRecord NewNodeRecord(const Candidate& candidate, std::int64_t graph_id, std::int64_t run_id,
                         std::string mutation);

struct EdgeRecord {
  std::int64_t parent = 0;
  std::int64_t child = 0;
  EdgeKind kind = EdgeKind::kDerive;
  std::int64_t run_id = 0;
  std::string mutation;  // what the proposal did, e.g. "knob UNROLL 2->4"
  std::int64_t created_at = 0;
};

// What a search's selection reads of a stored graph, without the wide
// columns (source, log, identity, mutation): Store::LoadGraphBrief. A node's
// other fields are read when it is needed (Store::GetNode).
struct NodeBrief {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  NodeStatus status = NodeStatus::kProposed;
  std::optional<double> speedup;  // as NodeRecord::speedup
  std::int64_t expansions = 0;
  std::uint32_t source = 0;  // index into GraphBrief::source_hashes
  // Its knobs_json as stored (GraphBrief::KnobsOf): for a reader that needs
  // the knobs of many nodes, in one buffer for all of them.
  std::size_t knobs_at = 0;
  std::size_t knobs_size = 0;
};

struct EdgeBrief {
  std::int64_t parent = 0;
  std::int64_t child = 0;
  EdgeKind kind = EdgeKind::kDerive;
};

struct GraphBrief {
  std::vector<NodeBrief> nodes;  // in id order
  std::vector<EdgeBrief> edges;  // in the order they were made
  std::vector<std::string> source_hashes;
  std::string knobs_text;  // every node's knobs_json, one after the other

  std::string_view KnobsOf(const NodeBrief& node) const {
    return std::string_view(knobs_text).substr(node.knobs_at, node.knobs_size);
  }
};

struct MeasurementRecord {
  std::int64_t id = 0;
  std::int64_t node_id = 0;
  std::int64_t run_id = 0;
  std::int64_t host_id = 0;
  Measurement measurement;  // with raw samples per shape
  std::int64_t created_at = 0;
  // "search" (the evaluation that judged the node), "confirm" (a
  // re-measurement of a confirmation round; Store::RecordConfirmation),
  // "same_code" (a copy of its twin's) or "hidden_shape" (a later check on
  // hidden shapes that the node failed; core/hidden_shapes.h).
  std::string purpose = "search";
};

struct HostRecord {
  std::int64_t id = 0;
  HostInfo info;
};

// The verdict of a confirmation round (search/engine/confirmation_rule.h),
// stored as its word: "confirmed" (node's median beats against's by more than
// the noise), "within_noise" (it does not: the incumbent stays the best),
// "unstable" (a re-measurement of node failed: never the best), or "final"
// (end of run, every re-measurement measured).
enum class ConfirmationVerdict { kConfirmed, kWithinNoise, kUnstable, kFinal };

std::string_view ToString(ConfirmationVerdict verdict);
std::optional<ConfirmationVerdict> ParseConfirmationVerdict(std::string_view text);

// One row of `kestrel best`: a node and its best measurement.
struct BestRow {
  std::int64_t node_id = 0;
  std::int64_t run_id = 0;  // the run that made the node (0: none, a person's)
  std::string task_name;
  std::string host_name;  // of the measurement; "" when it has no host
  double speedup = 0.0;
  KnobValues knobs;
  std::string mutation;
  std::int64_t measurement_id = 0;
  std::int64_t measured_at = 0;
  double roofline_fraction = 0.0;  // of that measurement; 0 when the host was not calibrated
  // Confidence: the row's speedup is the median of the node's `measurements`
  // measured results (passing the filters); spread = (max - min) / median;
  // confirmation: the verdict of its latest confirmation round
  // (Store::RecordConfirmation), none when it had none.
  int measurements = 0;
  double spread = 0.0;
  std::optional<ConfirmationVerdict> confirmation;
  // The task's baseline over the reference, from that measurement; 0 when
  // the task has none. speedup / baseline_speedup is the row's speedup over
  // the baseline.
  double baseline_speedup = 0.0;
};

// A confirmation round (EVALUATION.md, "Confirmation"): `node` re-measured
// interleaved with `against` (the incumbent; 0 at the end of a run, when the
// top candidates are re-measured together).
struct ConfirmationRecord {
  std::int64_t run_id = 0;
  std::int64_t host_id = 0;
  std::int64_t node_id = 0;
  std::int64_t against_id = 0;
  ConfirmationVerdict verdict = ConfirmationVerdict::kFinal;
  double node_median = 0.0;
  double against_median = 0.0;
  double noise = 0.0;  // relative: the larger (max - min) / median of the two nodes' speedups
  int samples = 0;     // measured results of node the median is over
};

// Filters of Store::Best; an empty filter does not filter.
struct BestQuery {
  std::optional<std::string> task;     // task name
  std::optional<std::int64_t> run_id;  // nodes this run made (each ranked over all its measurements)
  std::optional<std::string> host;     // measurements taken on a host of this name
  int top = 10;                        // at most this many rows; <= 0: all
};

// An LLM exchange (the schema holds them from v1; the LLM mutator writes them).
struct LlmCallRecord {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  std::optional<std::int64_t> node_id;  // the node it produced, once known
  std::string provider;
  std::string model;
  std::string prompt;    // JSON array of messages
  std::string response;  // raw text of the reply
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  double cost_usd = 0.0;
  double latency_s = 0.0;
  int http_status = 0;
  int retries = 0;
  std::string error;
  std::int64_t created_at = 0;
  // What the call was for: "mutate", "fix", "combine", "analysis", "plan".
  std::string purpose = "mutate";
};

// One profile of a node on a host (core/profile.h; docs/SCHEMA.md "profiles").
struct ProfileRecord {
  std::int64_t id = 0;
  std::int64_t node_id = 0;
  std::int64_t host_id = 0;  // 0: none
  std::int64_t run_id = 0;   // 0: none (kestrel show --profile, eval)
  std::string profile_json;  // ProfileToJson
  std::string digest;        // ProfileDigest of it
  double seconds = 0.0;      // what taking it cost
  std::int64_t created_at = 0;
};

// A measurement as the report's progress charts read it (Store::GraphMeasurements):
// no samples, log or shapes.
struct MeasurementBrief {
  std::int64_t id = 0;
  std::int64_t node_id = 0;
  std::int64_t run_id = 0;  // 0: none
  Outcome outcome = Outcome::kRejected;
  double speedup = 0.0;
  std::string purpose = "search";
  std::int64_t created_at = 0;
};

// A confirmation round as the report reads it (Store::GraphConfirmations).
struct ConfirmationBrief {
  std::int64_t run_id = 0;  // 0: none
  std::int64_t node_id = 0;
  ConfirmationVerdict verdict = ConfirmationVerdict::kFinal;
  double node_median = 0.0;
  std::int64_t created_at = 0;
};

// What changes whenever a run records something (Store::ReadDataVersion): a
// live page polls it and reloads when it differs.
struct DataVersion {
  std::int64_t measurement = 0;  // the newest measurement id (0: none)
  std::int64_t run_event = 0;    // the newest run event id
  std::int64_t node = 0;         // the newest node id
  std::int64_t human_action = 0;  // the newest human action id (a note, a label, a ban, ...)
  std::int64_t review_opened = 0;    // the newest review question id
  std::int64_t review_answered = 0;  // how many review questions are no longer open
  bool operator==(const DataVersion&) const = default;
};

}  // namespace kestrel
