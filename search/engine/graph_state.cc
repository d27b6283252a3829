#include "search/engine/graph_state.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/check.h"
#include "core/huge_pages.h"
#include "search/engine/graph_loader.h"

namespace kestrel::engine {
namespace {

// A run of nodes as the store handed it over, copied (the store reads the
// next run into the same buffers while this one is built): each node's
// knobs_at into `knobs`, and its source when `with_result` is told of it with knobs
// (else nullptr).
struct NodeRun {
  std::vector<NodeBrief> nodes;
  std::string knobs;
  std::vector<const std::shared_ptr<const std::string>*> sources;

  std::string_view KnobsOf(const NodeBrief& node) const {
    return std::string_view(knobs).substr(node.knobs_at, node.knobs_size);
  }
};

// Runs of nodes, from the thread that reads the store to the one that
// builds the graph.
class NodeFeed {
 public:
  void Push(NodeRun run) {
    {
      std::lock_guard lock(mutex_);
      runs_.push_back(std::move(run));
    }
    ready_.notify_one();
  }
  // No more runs: Next returns nullopt once the last is taken.
  void Close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    ready_.notify_one();
  }
  std::optional<NodeRun> Next() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [this] { return !runs_.empty() || closed_; });
    if (runs_.empty()) return std::nullopt;
    NodeRun run = std::move(runs_.front());
    runs_.pop_front();
    return run;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<NodeRun> runs_;
  bool closed_ = false;
};

// Closes the feed when it goes out of scope, a query that throws included,
// so that the thread building from it returns.
struct FeedCloser {
  NodeFeed& feed;
  ~FeedCloser() { feed.Close(); }
};

}  // namespace

GraphState::GraphState(Store& store, std::int64_t graph_id, std::int64_t run_id, std::int64_t host_id)
    : store_(store), graph_id_(graph_id), run_id_(run_id), host_id_(host_id) {}

Result<std::vector<NodeId>> GraphState::Load(const std::function<void(const StoredResult&)>& with_result) {
  // The nodes enter the graph, and `with_result` hears of them, as the store
  // reads them: a large graph's on a thread of its own, which the store
  // hands them over to in runs, so that building overlaps the query; a small
  // one's (not worth a thread) here, after it.
  constexpr std::size_t kThreadFrom = 10000;
  std::vector<NodeId> unfinished;
  const auto build = [&](const NodeRun& run) {
    for (std::size_t i = 0; i < run.nodes.size(); ++i) {
      const NodeBrief& node = run.nodes[i];
      GraphNode stored;
      stored.id = node.id;
      stored.status = node.status;
      stored.speedup = node.status == NodeStatus::kMeasured ? node.speedup : std::nullopt;
      stored.run_id = node.run_id;
      stored.expansions = static_cast<int>(node.expansions);
      graph_.AddNode(stored);
      if (!IsFinal(node.status)) unfinished.push_back(node.id);
      const std::string_view knobs = run.KnobsOf(node);
      if (run.sources[i] != nullptr || (with_result && IsFinal(node.status) && knobs == "{}")) {
        with_result({node.id, node.status, stored.speedup, run.sources[i], knobs});
      }
    }
  };
  NodeFeed feed;
  std::future<void> built;
  // Each source's text, for the nodes with knobs `with_result` is told of: read on this
  // thread (the store is this thread's), held in sources_ (whose values do
  // not move).
  std::vector<const std::shared_ptr<const std::string>*> source_of;
  Status sourced;  // the first source the store could not read
  const auto hand = [&](const GraphBrief& read, std::size_t expected) {
    if (!built.valid()) {
      graph_.Reserve(graph_.NodeCount() + expected, graph_.EdgeCount() + expected);
      const auto policy = read.nodes.size() >= kThreadFrom ? std::launch::async : std::launch::deferred;
      built = std::async(policy, [&feed, &build] {
        while (const auto run = feed.Next()) build(*run);
      });
    }
    NodeRun run;
    run.nodes = read.nodes;
    run.knobs = read.knobs_text;
    run.sources.resize(run.nodes.size());
    source_of.resize(read.source_hashes.size());
    for (std::size_t i = 0; i < run.nodes.size(); ++i) {
      const NodeBrief& node = run.nodes[i];
      if (!with_result || !IsFinal(node.status) || run.KnobsOf(node) == "{}" || !sourced) continue;
      auto& source = source_of[node.source];
      if (source == nullptr) {
        const std::string& hash = read.source_hashes[node.source];
        if (auto text = Source(hash); !text) {
          sourced = Fail(text.error());
          continue;
        }
        source = &sources_.at(hash);
      }
      run.sources[i] = source;
    }
    feed.Push(std::move(run));
  };
  Result<GraphBrief> brief;
  {
    const FeedCloser closer{feed};
    brief = store_.LoadGraphBrief(graph_id_, hand);
  }
  if (built.valid()) built.get();  // rethrows what the thread threw
  if (!brief) return Fail(brief.error());
  if (!sourced) return Fail(sourced.error());
  std::vector<GraphEdge> edges;
  ReserveHuge(edges, brief->edges.size());
  for (const EdgeBrief& edge : brief->edges) {
    // A self-edge says nothing about where a node came from; databases
    // written before duplicates of the parent itself were kept edge-free
    // (each is a run event now) may hold one.
    if (edge.parent == edge.child) continue;
    edges.push_back({edge.parent, edge.child, edge.kind});
    if (edge.kind == EdgeKind::kSameCode) same_code_copies_.insert(edge.parent);
  }
  graph_.AddDerivations(edges);
  return unfinished;
}

Result<bool> GraphState::Adopt(NodeId node) {
  if (graph_.Contains(node)) return false;
  auto record = store_.GetNode(node);
  if (!record) return Fail(record.error());
  auto edges = store_.LoadEdges(graph_id_);
  if (!edges) return Fail(edges.error());
  GraphNode stored;
  stored.id = record->id;
  stored.status = record->status;
  stored.speedup = record->status == NodeStatus::kMeasured ? record->speedup : std::nullopt;
  stored.run_id = record->run_id;
  stored.expansions = static_cast<int>(record->expansions);
  graph_.AddNode(stored);
  for (const EdgeRecord& edge : *edges) {
    if (edge.child == node && edge.parent != node && graph_.Contains(edge.parent)) {
      graph_.AddDerivation(edge.parent, edge.child, edge.kind);
    }
  }
  return true;
}

Result<std::shared_ptr<const std::string>> GraphState::Source(const std::string& hash) {
  auto& source = sources_[hash];
  if (!source) {
    auto text = store_.GetSource(hash);
    if (!text) {
      sources_.erase(hash);
      return Fail(text.error());
    }
    source = std::make_shared<const std::string>(std::move(*text));
  }
  return source;
}

const GraphState::CandidateRef& GraphState::RefOf(NodeId node) {
  if (const auto known = candidates_.find(node); known != candidates_.end()) return known->second;
  KESTREL_CHECK(graph_.Contains(node), ("unknown node id " + std::to_string(node)).c_str());
  auto record = store_.GetNode(node);
  KESTREL_CHECK(record.has_value(), ("reading node " + std::to_string(node) + ": " +
                                     (record ? std::string() : record.error().message())).c_str());
  auto source = Source(record->source_hash);
  KESTREL_CHECK(source.has_value(), ("reading the source of node " + std::to_string(node) + ": " +
                                     (source ? std::string() : source.error().message())).c_str());
  Remember(node, *record, std::move(*source));
  return candidates_.at(node);
}

Result<std::optional<NodeId>> GraphState::FindByIdentity(const std::string& identity) {
  if (auto added = graph_.FindByIdentity(identity)) return added;  // this session's nodes
  auto stored = store_.FindNode(graph_id_, identity);
  if (!stored || !*stored) return stored;
  // Stored by another process since the graph was loaded (`kestrel add`):
  // read into the graph, so that the edge the caller adds has both ends.
  if (auto adopted = Adopt(**stored); !adopted) return Fail(adopted.error());
  return stored;
}

std::string GraphState::LabelOf(NodeId node) {
  const CandidateRef& ref = RefOf(node);
  return ref.knobs.empty() ? ref.mutation : ToString(ref.knobs);
}

Candidate GraphState::CandidateOf(NodeId node) {
  const CandidateRef& ref = RefOf(node);
  return {*ref.source, ref.knobs, ref.toolchain, ref.flags};
}

void GraphState::Remember(NodeId id, const NodeRecord& record, std::shared_ptr<const std::string> source) {
  candidates_[id] = {std::move(source), record.knobs, record.toolchain, record.flags, record.mutation};
}

Status GraphState::Write(const std::function<Status()>& writes, ChangeNotes& notes,
                         const std::optional<NodeId>& node) {
  bool journaled = false;
  std::int64_t rows = journal_rows_, snapshot_entries = snapshot_entries_;
  const Status written = store_.Atomically([&]() -> Status {
    if (auto done = writes(); !done) return done;
    for (LlmCallRecord& call : notes.calls) {
      call.run_id = run_id_;
      if (!call.node_id) call.node_id = node;  // an analysis names the node it analysed
      if (auto id = store_.AddLlmCall(call); !id) return Fail(id.error());
    }
    for (HumanActionRecord& action : notes.actions) {
      action.graph_id = graph_id_;
      action.run_id = run_id_;
      if (action.node_id == 0 && node) action.node_id = *node;
      if (auto id = store_.AddHumanAction(action); !id) return Fail(id.error());
    }
    for (const auto& [kind, detail] : notes.events) {
      if (auto done = store_.AddRunEvent(run_id_, kind, detail); !done) return done;
    }
    std::string state;
    if (notes.run_state_of && node) {
      state = notes.run_state_of(*node);
    } else {
      state = notes.run_state;
    }
    if (state.empty()) return {};
    if (journal_.pending) {
      const std::string entries = journal_.pending();
      if (!entries.empty()) {
        journaled = true;
        if (rows + 1 < std::max(journal_.compact_rows, snapshot_entries / 64)) {
          if (auto done = store_.AppendStrategyJournal(run_id_, entries); !done) return done;
          ++rows;
        } else {
          const std::string snapshot = journal_.snapshot();
          if (auto done = store_.CompactStrategyJournal(run_id_, snapshot); !done) return done;
          rows = 1;
          snapshot_entries = static_cast<std::int64_t>(std::count(snapshot.begin(), snapshot.end(), ','));
        }
      }
    }
    return store_.SaveRunState(run_id_, state);
  });
  if (written && journaled) {
    journal_rows_ = rows;
    snapshot_entries_ = snapshot_entries;
    journal_.stored();
  }
  return written;
}


Result<NodeId> GraphState::AddSeed(NodeRecord record) {
  auto id = store_.AddNode(record, std::nullopt);
  if (!id) return Fail(id.error());
  record.id = *id;
  Remember(*id, record, std::make_shared<const std::string>(record.source));
  graph_.AddNode(ToGraphNode(record));
  return *id;
}

Result<NodeId> GraphState::AddChild(NodeId parent, NodeRecord record, EdgeKind edge_kind, bool expansion,
                                    ChangeNotes notes) {
  std::optional<NodeId> added;  // the calls name it: Write reads it after `writes`
  const auto writes = [&]() -> Status {
    auto id = store_.AddNode(record, EdgeRecord{parent, 0, edge_kind, run_id_, record.mutation, 0});
    if (!id) return Fail(id.error());
    added = *id;
    return expansion ? store_.AddExpansion(parent) : Status{};
  };
  if (auto written = Write(writes, notes, added); !written) return Fail(written.error());
  const NodeId id = *added;
  const auto& parent_source = candidates_.at(parent).source;
  Remember(id, record,
           *parent_source == record.source ? parent_source : std::make_shared<const std::string>(record.source));
  record.id = id;
  graph_.AddNode(ToGraphNode(record));
  graph_.AddDerivation(parent, id, edge_kind);
  return id;
}

Status GraphState::AddDuplicate(NodeId parent, NodeId existing, const std::string& mutation, bool expansion,
                                ChangeNotes notes) {
  const auto writes = [&]() -> Status {
    if (auto done = store_.RecordDuplicate({parent, existing, EdgeKind::kDuplicate, run_id_, mutation, 0}); !done) return done;
    return expansion ? store_.AddExpansion(parent) : Status{};
  };
  if (auto written = Write(writes, notes, existing); !written) return written;
  if (existing != parent) graph_.AddDerivation(parent, existing, EdgeKind::kDuplicate);
  return {};
}

Status GraphState::Decline(NodeId parent, bool expansion, ChangeNotes notes) {
  return Write([&] { return expansion ? store_.AddExpansion(parent) : Status{}; }, notes, std::nullopt);
}

void GraphState::NoteSelection(NodeId parent) { graph_.NoteExpansion(parent); }

Status GraphState::SetBuilt(NodeId node, const std::string& code_hash) {
  const auto writes = [&]() -> Status {
    if (auto done = store_.SetNodeStatus(node, NodeStatus::kBuilt, "", ""); !done) return done;
    return code_hash.empty() ? Status{} : store_.SetCodeHash(node, code_hash);
  };
  if (auto done = store_.Atomically(writes); !done) return done;
  graph_.SetResult(node, NodeStatus::kBuilt, std::nullopt);
  return {};
}

Result<std::optional<NodeId>> GraphState::FindSameCode(NodeId node, const std::string& code_hash) {
  auto twin = store_.FindSameCode(graph_id_, code_hash, host_id_, node);
  if (!twin || !*twin) return twin;
  if (auto adopted = Adopt(**twin); !adopted) return Fail(adopted.error());  // as FindByIdentity
  return twin;
}

Result<Measurement> GraphState::SetSameCode(NodeId node, NodeId twin, double build_seconds, ChangeNotes notes) {
  auto rows = store_.GetMeasurements(twin);
  if (!rows) return Fail(rows.error());
  const MeasurementRecord* timed = nullptr;
  for (const MeasurementRecord& row : *rows) {
    if (row.purpose == "search" && row.host_id == host_id_ && row.measurement.outcome == Outcome::kMeasured) timed = &row;
  }
  if (timed == nullptr) {
    return Fail(Error::Internal("node " + std::to_string(twin) + " has no timed result on this host to copy"));
  }
  Measurement copy = timed->measurement;
  copy.speedup = graph_.Node(twin).speedup.value_or(copy.speedup);  // the twin's median, when re-measured
  copy.reason = "same code as node " + std::to_string(twin) + ": not timed";
  copy.log = "The build of this node is the same code as node " + std::to_string(twin) +
             "'s (same code hash), so it was not timed: this result, its timings included, is node " +
             std::to_string(twin) + "'s.\n";
  copy.build_seconds = build_seconds;
  copy.eval_seconds = 0;
  notes.events.emplace_back("same_code",
                            nlohmann::json{{"node", node}, {"twin", twin}, {"speedup", copy.speedup}}.dump());
  const auto writes = [&]() -> Status {
    auto id = store_.RecordSameCode(node, twin, run_id_, host_id_, copy);
    return id ? Status{} : Fail(id.error());
  };
  if (auto written = Write(writes, notes, std::nullopt); !written) return Fail(written.error());
  graph_.SetResult(node, NodeStatus::kMeasured, copy.speedup);
  graph_.AddDerivation(node, twin, EdgeKind::kSameCode);
  same_code_copies_.insert(node);
  return copy;
}

Status GraphState::SetResult(NodeId node, const Measurement& measurement, const ConfirmationRound& round,
                             ChangeNotes notes) {
  std::map<NodeId, double> medians;
  const auto writes = [&]() -> Status {
    if (auto id = store_.RecordMeasurement(node, run_id_, host_id_, measurement); !id) return Fail(id.error());
    if (round.empty()) return {};
    auto stored = store_.RecordConfirmation(run_id_, host_id_, round.verdicts, round.measurements);
    if (!stored) return Fail(stored.error());
    medians = std::move(*stored);
    return {};
  };
  if (auto written = Write(writes, notes, std::nullopt); !written) return written;
  const bool measured = measurement.outcome == Outcome::kMeasured;
  graph_.SetResult(node, StatusOf(measurement.outcome),
                   measured ? std::optional<double>(measurement.speedup) : std::nullopt);
  ApplyMedians(medians);
  return {};
}

Status GraphState::SetHiddenShapeFailure(NodeId node, const Measurement& failure, ChangeNotes notes) {
  const auto writes = [&]() -> Status {
    auto id = store_.RecordMeasurement(node, run_id_, host_id_, failure, "hidden_shape");
    return id ? Status{} : Fail(id.error());
  };
  if (auto written = Write(writes, notes, std::nullopt); !written) return written;
  graph_.SetResult(node, StatusOf(failure.outcome), std::nullopt);
  return {};
}

Result<std::map<NodeId, double>> GraphState::AddRound(const ConfirmationRound& round, ChangeNotes notes) {
  std::map<NodeId, double> medians;
  const auto writes = [&]() -> Status {
    if (round.empty()) return {};
    auto stored = store_.RecordConfirmation(run_id_, host_id_, round.verdicts, round.measurements);
    if (!stored) return Fail(stored.error());
    medians = std::move(*stored);
    return {};
  };
  if (auto written = Write(writes, notes, std::nullopt); !written) return Fail(written.error());
  ApplyMedians(medians);
  return medians;
}

void GraphState::ApplyMedians(const std::map<NodeId, double>& medians) {
  for (const auto& [id, median] : medians) graph_.SetResult(id, NodeStatus::kMeasured, median);
}

}  // namespace kestrel::engine
