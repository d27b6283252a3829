#pragma once
// GraphState: the one owner of the engine's nodes (Ninja's State is the
// model). A node lives in the Store (its rows), in the SearchGraph (what
// selection reads) and here (its candidate, sources shared between knob
// variants); every change goes through one method below, which writes the
// store in one transaction — with the LLM calls, run events and the run's
// resumable state that belong to it — and only then changes the graph. When
// the store refuses, the error is returned and nothing changed.
//
// A graph of a million nodes opens in about two seconds (docs/BENCHMARKS.md,
// "Opening a graph"): Load reads what selection needs
// (Store::LoadGraphBrief), and a stored node's candidate, mutation and
// identity are read from the store when first asked for.
//
// Expansions are one quantity: a node's stored count (expansions that
// ended: a proposal, a duplicate or a decline) plus the selections of it
// still in flight, which NoteSelection counts in the graph only. A run
// killed mid-expansion resumes with the count its saved state agrees with.
//
// Not thread-safe: the engine calls it under its mutex.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/candidate.h"
#include "core/measurement.h"
#include "graph/search_graph.h"
#include "store/store.h"

namespace kestrel::engine {

// What a change carries into its transaction besides the node itself.
struct ChangeNotes {
  std::vector<LlmCallRecord> calls;  // stored naming the node the change is about (none for a decline)
  std::vector<std::pair<std::string, std::string>> events;  // run events: kind, detail JSON
  // A reviewer's verdicts, stored for this graph and run naming the node the
  // change is about when they name none (the duplicate's existing node).
  std::vector<HumanActionRecord> actions;
  std::string run_state;  // the run's resumable state after the change; "": not saved
  // Instead of run_state, for a change that makes a node: the state given
  // the new node's id (which the state may name).
  std::function<std::string(NodeId)> run_state_of;
};

// A confirmation round to store: verdicts and re-measurements (node, result).
struct ConfirmationRound {
  std::vector<ConfirmationRecord> verdicts;
  std::vector<std::pair<NodeId, Measurement>> measurements;
  bool empty() const { return verdicts.empty() && measurements.empty(); }
};

class GraphState {
 public:
  GraphState(Store& store, std::int64_t graph_id, std::int64_t run_id, std::int64_t host_id);

  // A stored final node, as Load read it: for the knob advisor (and its
  // source ranker).
  struct StoredResult {
    NodeId node = 0;
    NodeStatus status = NodeStatus::kProposed;
    std::optional<double> speedup;
    // Its text, shared; read only for a node with knobs (null for one
    // without: a ranker reads the few it needs later, SharedSourceOf).
    const std::shared_ptr<const std::string>* source = nullptr;
    std::string_view knobs_json;  // "{}": no knobs
  };
  // Reads the task's graph: nodes, derivations, stored expansions. Calls
  // `with_result` for every final node, in id order. A large graph's nodes
  // are added, and `with_result` called, on a thread of its own while the
  // store reads the rest (`with_result` must not read the graph; it has
  // returned for the last node when Load returns).
  // Returns the nodes whose evaluation has not ended (proposed or built), in id order.
  Result<std::vector<NodeId>> Load(const std::function<void(const StoredResult&)>& with_result = {});

  const SearchGraph& graph() const { return graph_; }
  // The strategy's journal (search/strategies/strategy.h): with every run
  // state a change saves, `pending()` (a JSON array; "" when nothing
  // changed) is appended to the run's journal in the same transaction, and
  // `stored()` is called once the transaction committed. When the run's
  // rows reach max(`compact_rows`, a 64th of the values in the last
  // snapshot), that save writes `snapshot()` in their place instead: a
  // resume reads one large row and at most tens of thousands of small ones,
  // not a row per change (a million rows took 1.6 s to read and replay).
  // Amortized, a snapshot costs a save O(1).
  struct Journal {
    std::function<std::string()> pending;
    std::function<std::string()> snapshot;
    std::function<void()> stored;
    std::int64_t compact_rows = 4096;
  };
  void SetJournal(Journal journal) { journal_ = std::move(journal); }
  // The rows the run has already (read on resume).
  void SetJournalRows(std::int64_t rows) { journal_rows_ = rows; }
  // The candidate of a node in the graph. A stored node's fields are read
  // from the store the first time; a store that fails then is a broken
  // invariant (KESTREL_CHECK: the run stops with the error).
  Candidate CandidateOf(NodeId node);
  const std::string& SourceOf(NodeId node) { return *RefOf(node).source; }
  // The same, shared: one string per distinct source (knob variants share it).
  const std::shared_ptr<const std::string>& SharedSourceOf(NodeId node) { return RefOf(node).source; }
  const KnobValues& KnobsOf(NodeId node) { return RefOf(node).knobs; }
  // How the node was made ("seed:seed.cpp", "knob UNROLL 2->4", ...).
  const std::string& MutationOf(NodeId node) { return RefOf(node).mutation; }
  // Its short display label: its knob values, or its mutation.
  std::string LabelOf(NodeId node);
  // The node of the graph with this candidate identity, if any.
  Result<std::optional<NodeId>> FindByIdentity(const std::string& identity);

  // A node another process stored in the graph while the run went on (a
  // person's, `kestrel add`): read with the edges into it. False when the
  // graph holds it already; NotFound for an unknown node.
  Result<bool> Adopt(NodeId node);
  // A seed: a node without a parent.
  Result<NodeId> AddSeed(NodeRecord record);
  // A new node under `parent` by an edge of `edge_kind` ("derive", "fix").
  // `expansion`: it ends a selection of the parent (a fix does not).
  Result<NodeId> AddChild(NodeId parent, NodeRecord record, EdgeKind edge_kind, bool expansion,
                          ChangeNotes notes);
  // A proposal that was `existing` already: a duplicate edge (none to the
  // parent itself) and a "duplicate" run event.
  Status AddDuplicate(NodeId parent, NodeId existing, const std::string& mutation, bool expansion, ChangeNotes notes);
  // An expansion (or fix) that proposed nothing.
  Status Decline(NodeId parent, bool expansion, ChangeNotes notes);
  // An expansion of `parent` in flight (selection): counted now, in the graph only.
  void NoteSelection(NodeId parent);
  // Built, with its code fingerprint (BuildResult::code_hash; "": unknown).
  Status SetBuilt(NodeId node, const std::string& code_hash = "");
  // The measured node of the graph, timed on this host, whose build is the
  // same code (Store::FindSameCode); nullopt when none or code_hash is "".
  Result<std::optional<NodeId>> FindSameCode(NodeId node, const std::string& code_hash);
  // `node` is not timed: it carries `twin`'s result (its latest timed
  // measurement on this host, at the twin's current speedup, reason "same
  // code as node N: not timed"), stored with purpose 'same_code', a
  // same_code edge node -> twin and a "same_code" run event. Returns the
  // copied result.
  Result<Measurement> SetSameCode(NodeId node, NodeId twin, double build_seconds, ChangeNotes notes);
  // A node whose result is a copy of its twin's (a same_code edge from it):
  // never an independent confirmation, never the incumbent.
  bool IsSameCodeCopy(NodeId node) const { return same_code_copies_.count(node) > 0; }
  // The node's evaluation, with the confirmation round it led to; each
  // re-measured node's speedup becomes the median the store returns.
  Status SetResult(NodeId node, const Measurement& measurement, const ConfirmationRound& round, ChangeNotes notes);
  // A measured node that failed a later check on hidden shapes: `failure`
  // stored with purpose 'hidden_shape', the node `wrong` (or `rejected`).
  Status SetHiddenShapeFailure(NodeId node, const Measurement& failure, ChangeNotes notes);
  // A confirmation round alone (the end of a run). Returns node -> new median.
  Result<std::map<NodeId, double>> AddRound(const ConfirmationRound& round, ChangeNotes notes);

 private:
  struct CandidateRef {
    std::shared_ptr<const std::string> source;
    KnobValues knobs;
    std::string toolchain;
    std::vector<std::string> flags;
    std::string mutation;
  };
  const CandidateRef& RefOf(NodeId node);
  Result<std::shared_ptr<const std::string>> Source(const std::string& hash);
  // Runs `writes` and then the notes in one transaction; the notes' calls
  // name `node` as it is once `writes` ran.
  Status Write(const std::function<Status()>& writes, ChangeNotes& notes, const std::optional<NodeId>& node);
  void Remember(NodeId id, const NodeRecord& record, std::shared_ptr<const std::string> source);
  void ApplyMedians(const std::map<NodeId, double>& medians);

  Store& store_;
  std::int64_t graph_id_;
  std::int64_t run_id_;
  std::int64_t host_id_;
  SearchGraph graph_;
  std::unordered_map<NodeId, CandidateRef> candidates_;
  std::unordered_map<std::string, std::shared_ptr<const std::string>> sources_;  // by hash
  std::unordered_set<NodeId> same_code_copies_;
  Journal journal_;
  std::int64_t journal_rows_ = 0;       // the run's rows in strategy_journal
  std::int64_t snapshot_entries_ = 0;   // values in the last snapshot written (its commas)
};

}  // namespace kestrel::engine
