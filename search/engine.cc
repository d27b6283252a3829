#include "search/engine.h"

#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <ostream>
#include <random>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "search/graph_loader.h"
#include "search/stop.h"

namespace kestrel {
namespace {

namespace flow = tbb::flow;
using Clock = std::chrono::steady_clock;

// Selected work: expand a parent, or evaluate a node already in the graph
// (a new seed, or a node left in flight by an earlier run).
// Or repair a failed node its mutator made (kFix; `failure` is its result).
struct WorkItem {
  enum class Kind { kExpand, kEvaluate, kFix } kind = Kind::kExpand;
  NodeId node = 0;
  std::uint64_t rng_seed = 0;
  std::shared_ptr<const Measurement> failure;  // kFix only
};

struct Job {
  NodeId node = 0;
  Candidate candidate;
  BuildResult build;
};

// Everything that reaches the record stage.
struct Event {
  enum class Kind { kProposed, kDeclined, kEvaluate, kBuilt, kMeasured } kind = Kind::kDeclined;
  NodeId parent = 0;
  std::optional<Proposal> proposal;
  Job job;
  Measurement measurement;
  std::string note;
  // From mutate: the mutator that proposed (index into mutators_, -1: none),
  // the LLM calls made, whether a decline exhausts the parent, and a stop.
  int mutator = -1;
  std::vector<LlmCallRecord> calls;
  bool exhausted = true;
  std::vector<std::string> declines;
  std::vector<std::string> stops;
};

// The candidate of a graph node, kept in memory so that stages other than
// record never touch the store. Sources are shared between knob variants.
struct CandidateRef {
  std::shared_ptr<const std::string> source;
  KnobValues knobs;
  std::string toolchain;
  std::vector<std::string> flags;
};

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

class Engine::Impl {
 public:
  Impl(Store& store, const Task& task, Evaluator& evaluator, const RunConfig& config,
       std::vector<std::unique_ptr<Mutator>> mutators, std::unique_ptr<Strategy> strategy, EngineOptions options)
      : store_(store),
        task_(task),
        evaluator_(evaluator),
        config_(config),
        mutators_(std::move(mutators)),
        strategy_(std::move(strategy)),
        options_(options),
        rng_(config.seed ^ (static_cast<std::uint64_t>(options.run_id) * 0x9e3779b97f4a7c15ULL)) {}

  Result<RunSummary> Run();
  const SearchGraph& graph() const { return graph_; }

 private:
  Status LoadGraph();
  Status AddSeeds();
  // Source body: the next work item, or stop. Runs serially.
  WorkItem Next(tbb::flow_control& control);
  std::optional<std::string> StopReasonLocked() const;
  Event Mutate(const WorkItem& item);
  // Fills the context fields of `parent` (lineage, inspirations...). Locked.
  void FillContextLocked(ParentView& parent) const;
  // Stores the calls of a mutate event, naming `node` when there is one.
  void StoreCalls(Event& event, std::optional<NodeId> node);
  // Queues a fix of a failed node when its mutator can fix and rounds remain.
  void MaybeQueueFix(const Job& job, const Measurement& measurement);
  // Record body: the only writer of store_ and graph_. Returns what goes on.
  enum class Route { kBuild, kMeasure, kDone };
  Route Record(Event& event, Job& out);
  void RecordResult(const Job& job, const Measurement& measurement);
  void Fatal(const Error& error);
  Job JobFor(NodeId node);
  void Progress(const Job& job, const Measurement& measurement);

  Store& store_;
  const Task& task_;
  Evaluator& evaluator_;
  const RunConfig& config_;
  std::vector<std::unique_ptr<Mutator>> mutators_;
  std::unique_ptr<Strategy> strategy_;
  EngineOptions options_;

  std::mutex mutex_;  // guards everything below
  std::condition_variable changed_;
  SearchGraph graph_;
  std::unordered_map<NodeId, CandidateRef> candidates_;
  std::unordered_map<std::string, std::shared_ptr<const std::string>> sources_;  // by hash
  std::deque<NodeId> pending_;
  std::deque<WorkItem> fixes_;                     // fix items waiting for select
  std::unordered_map<NodeId, int> made_by_;        // mutator index of nodes made by this run
  std::unordered_map<NodeId, int> fix_depth_;      // fix edges on the way to a node made by this run
  std::deque<std::string> recent_failures_;        // newest last, a few
  std::mt19937_64 rng_;
  int in_flight_ = 0;          // work items between select and their release
  int unstarted_ = 0;          // of those, the ones not yet sent to build
  std::int64_t started_ = 0;   // candidates sent to build by this run
  std::int64_t since_best_ = 0;
  std::optional<std::string> stop_reason_;
  RunSummary summary_;
  Clock::time_point start_;
};

Status Engine::Impl::LoadGraph() {
  auto loaded = LoadSearchGraph(store_, options_.graph_id);
  if (!loaded) return Fail(loaded.error());
  graph_ = std::move(loaded->graph);
  for (const NodeRecord& record : loaded->nodes) {
    auto& source = sources_[record.source_hash];
    if (!source) {
      auto text = store_.GetSource(record.source_hash);
      if (!text) return Fail(text.error());
      source = std::make_shared<const std::string>(std::move(*text));
    }
    candidates_[record.id] = {source, record.knobs, record.toolchain, record.flags};
    if (!IsFinal(record.status)) pending_.push_back(record.id);
  }
  return {};
}

Status Engine::Impl::AddSeeds() {
  for (const SourceFile& seed : task_.seeds) {
    auto knobs = ParseKnobs(seed.text);
    if (!knobs) return Fail(knobs.error().WithContext(task_.name + "/" + seed.name));
    Candidate candidate{seed.text, DefaultKnobs(*knobs), evaluator_.Toolchain(), evaluator_.Flags()};
    const std::string identity = candidate.Identity();
    if (graph_.FindByIdentity(identity)) continue;
    NodeRecord record;
    record.graph_id = options_.graph_id;
    record.run_id = options_.run_id;
    record.identity = identity;
    record.source = candidate.source;
    record.knobs = candidate.knobs;
    record.toolchain = candidate.toolchain;
    record.flags = candidate.flags;
    record.mutation = "seed:" + seed.name;
    auto id = store_.AddNode(record, std::nullopt);
    if (!id) return Fail(id.error());
    auto source = std::make_shared<const std::string>(candidate.source);
    candidates_[*id] = {source, candidate.knobs, candidate.toolchain, candidate.flags};
    record.id = *id;
    graph_.AddNode(ToGraphNode(record));
    pending_.push_back(*id);
  }
  return {};
}

std::optional<std::string> Engine::Impl::StopReasonLocked() const {
  if (stop_reason_) return stop_reason_;
  if (StopRequested()) return "signal";
  if (config_.budget.time && Seconds(options_.spent_seconds) + (Clock::now() - start_) >= *config_.budget.time) {
    return "time";
  }
  return std::nullopt;
}

WorkItem Engine::Impl::Next(tbb::flow_control& control) {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (auto reason = StopReasonLocked()) {
      if (!stop_reason_) stop_reason_ = reason;
      control.stop();
      return {};
    }
    const bool budget_left = !config_.budget.evaluations ||
                             options_.spent_evaluations + started_ + unstarted_ < *config_.budget.evaluations;
    if (budget_left && !pending_.empty()) {
      const NodeId node = pending_.front();
      pending_.pop_front();
      ++in_flight_;
      ++unstarted_;
      return {WorkItem::Kind::kEvaluate, node, rng_(), nullptr};
    }
    if (budget_left && !fixes_.empty()) {
      WorkItem fix = std::move(fixes_.front());
      fixes_.pop_front();
      ++in_flight_;
      ++unstarted_;
      return fix;
    }
    if (budget_left) {
      if (auto parent = strategy_->Select(graph_, rng_)) {
        graph_.NoteExpansion(*parent);
        ++in_flight_;
        ++unstarted_;
        return {WorkItem::Kind::kExpand, *parent, rng_(), nullptr};
      }
    }
    if (in_flight_ == 0) {
      stop_reason_ = budget_left ? "exhausted" : "evaluations";
      control.stop();
      return {};
    }
    changed_.wait_for(lock, std::chrono::milliseconds(100));
  }
}

Event Engine::Impl::Mutate(const WorkItem& item) {
  Event event;
  event.parent = item.node;
  if (item.kind == WorkItem::Kind::kEvaluate) {
    event.kind = Event::Kind::kEvaluate;
    return event;
  }
  try {
    ParentView parent{item.node, {}};
    const bool wants_context = std::any_of(mutators_.begin(), mutators_.end(),
                                           [](const auto& mutator) { return mutator->WantsContext(); });
    {
      std::lock_guard lock(mutex_);
      const CandidateRef& ref = candidates_.at(item.node);
      parent.candidate = {*ref.source, ref.knobs, evaluator_.Toolchain(), evaluator_.Flags()};
      if (wants_context && item.kind == WorkItem::Kind::kExpand) FillContextLocked(parent);
    }
    const IsKnown is_known = [this](const std::string& identity) {
      std::lock_guard lock(mutex_);
      return graph_.FindByIdentity(identity).has_value();
    };
    const auto take = [&event](MutationResult& result, int index) {
      for (auto& call : result.calls) event.calls.push_back(std::move(call));
      if (!result.stop_reason.empty()) event.stops.push_back(result.stop_reason);
      if (result.proposal) {
        event.kind = Event::Kind::kProposed;
        event.proposal = std::move(result.proposal);
        event.mutator = index;
        return true;
      }
      if (!result.note.empty()) event.declines.push_back(result.note);
      event.exhausted = event.exhausted && result.exhausted;
      return false;
    };
    event.kind = Event::Kind::kDeclined;
    if (item.kind == WorkItem::Kind::kFix) {
      int index = -1;
      {
        std::lock_guard lock(mutex_);
        index = made_by_.at(item.node);
      }
      MutationResult result = mutators_[static_cast<std::size_t>(index)]->Fix(parent, *item.failure, is_known);
      if (result.proposal) result.proposal->edge_kind = "fix";
      take(result, index);
      event.exhausted = false;  // a failed node is never expanded anyway
      return event;
    }
    std::mt19937_64 rng(item.rng_seed);
    // Mutators in a random order drawn by weight: the first that does not decline wins.
    std::vector<double> weights;
    for (const auto& mutator : config_.mutators) weights.push_back(mutator.weight);
    std::vector<std::size_t> order;
    while (std::any_of(weights.begin(), weights.end(), [](double weight) { return weight > 0; })) {
      std::discrete_distribution<std::size_t> pick(weights.begin(), weights.end());
      order.push_back(pick(rng));
      weights[order.back()] = 0;
    }
    for (std::size_t index : order) {
      MutationResult result = mutators_[index]->Expand(parent, rng, is_known);
      if (take(result, static_cast<int>(index))) return event;
    }
  } catch (const std::exception& error) {
    event.kind = Event::Kind::kDeclined;
    event.note = std::string("mutator failed: ") + error.what();
  }
  return event;
}

Job Engine::Impl::JobFor(NodeId node) {
  const CandidateRef& ref = candidates_.at(node);
  return {node, {*ref.source, ref.knobs, ref.toolchain, ref.flags}, {}};
}

void Engine::Impl::Fatal(const Error& error) {
  if (!stop_reason_) stop_reason_ = "error: " + error.message();
}

Engine::Impl::Route Engine::Impl::Record(Event& event, Job& out) {
  std::lock_guard lock(mutex_);
  // A work item from mutate is either started now (sent to build) or done.
  const bool from_mutate = event.kind == Event::Kind::kEvaluate || event.kind == Event::Kind::kDeclined ||
                           event.kind == Event::Kind::kProposed;
  if (from_mutate) --unstarted_;
  switch (event.kind) {
    case Event::Kind::kEvaluate:
      out = JobFor(event.parent);
      ++started_;
      return Route::kBuild;
    case Event::Kind::kDeclined:
      StoreCalls(event, std::nullopt);
      if (event.exhausted) strategy_->MarkExhausted(event.parent);
      for (const std::string& note : event.declines) {
        (void)store_.AddRunEvent(options_.run_id, "mutator_declined",
                                 nlohmann::json{{"parent", event.parent}, {"reason", note}}.dump());
      }
      if (!event.note.empty()) {
        (void)store_.AddRunEvent(options_.run_id, "mutator_error",
                                 nlohmann::json{{"parent", event.parent}, {"error", event.note}}.dump());
      }
      return Route::kDone;
    case Event::Kind::kProposed: {
      Proposal& proposal = *event.proposal;
      const std::string identity = proposal.candidate.Identity();
      if (auto existing = graph_.FindByIdentity(identity)) {
        // No work twice: the proposal becomes an edge to the existing node.
        EdgeRecord edge{event.parent, *existing, "duplicate", options_.run_id, proposal.mutation, 0};
        if (auto status = store_.AddEdge(edge); !status) Fatal(status.error());
        graph_.AddDerivation(event.parent, *existing, "duplicate");
        StoreCalls(event, *existing);
        ++summary_.duplicates;
        return Route::kDone;
      }
      NodeRecord record;
      record.graph_id = options_.graph_id;
      record.run_id = options_.run_id;
      record.identity = identity;
      record.source = proposal.candidate.source;
      record.knobs = proposal.candidate.knobs;
      record.toolchain = proposal.candidate.toolchain;
      record.flags = proposal.candidate.flags;
      record.mutation = proposal.mutation;
      EdgeRecord edge{event.parent, 0, proposal.edge_kind, options_.run_id, proposal.mutation, 0};
      auto id = store_.AddNode(record, edge);
      if (!id) {
        Fatal(id.error());
        return Route::kDone;
      }
      const auto& parent_ref = candidates_.at(event.parent);
      auto source = *parent_ref.source == proposal.candidate.source
                        ? parent_ref.source
                        : std::make_shared<const std::string>(proposal.candidate.source);
      candidates_[*id] = {source, record.knobs, record.toolchain, record.flags};
      record.id = *id;
      graph_.AddNode(ToGraphNode(record));
      graph_.AddDerivation(event.parent, *id, proposal.edge_kind);
      StoreCalls(event, *id);
      if (event.mutator >= 0) made_by_[*id] = event.mutator;
      if (proposal.edge_kind == "fix") {
        const auto parent_depth = fix_depth_.find(event.parent);
        fix_depth_[*id] = (parent_depth == fix_depth_.end() ? 0 : parent_depth->second) + 1;
      }
      out = Job{*id, std::move(proposal.candidate), {}};
      ++started_;
      return Route::kBuild;
    }
    case Event::Kind::kBuilt:
      if (auto status = store_.SetNodeStatus(event.job.node, NodeStatus::kBuilt, "", ""); !status) {
        Fatal(status.error());
      }
      graph_.SetResult(event.job.node, NodeStatus::kBuilt, std::nullopt);
      if (const auto reason = StopReasonLocked(); reason && *reason == "time") {
        // Out of time: not measured now; it stays `built`, and the next run of
        // the task (or kestrel resume) measures it first.
        return Route::kDone;
      }
      out = std::move(event.job);
      return Route::kMeasure;
    case Event::Kind::kMeasured:
      RecordResult(event.job, event.measurement);
      return Route::kDone;
  }
  return Route::kDone;
}

void Engine::Impl::RecordResult(const Job& job, const Measurement& measurement) {
  auto id = store_.RecordMeasurement(job.node, options_.run_id, options_.host_id, measurement);
  if (!id) return Fatal(id.error());
  const bool measured = measurement.outcome == Outcome::kMeasured;
  const auto previous_best = graph_.Best(1);
  const double previous_speedup = previous_best.empty() ? 0.0 : *graph_.Node(previous_best[0]).speedup;
  graph_.SetResult(job.node, StatusOf(measurement.outcome),
                   measured ? std::optional<double>(measurement.speedup) : std::nullopt);
  ++summary_.evaluations;
  ++summary_.outcomes[std::string(ToString(measurement.outcome))];
  if (measured && measurement.speedup > previous_speedup) {
    since_best_ = 0;
    (void)store_.AddRunEvent(options_.run_id, "new_best",
                             nlohmann::json{{"node", job.node}, {"speedup", measurement.speedup}}.dump());
  } else {
    ++since_best_;
  }
  if (config_.budget.plateau && since_best_ >= *config_.budget.plateau && !stop_reason_) stop_reason_ = "plateau";
  MaybeQueueFix(job, measurement);
  Progress(job, measurement);
}

void Engine::Impl::MaybeQueueFix(const Job& job, const Measurement& measurement) {
  const Outcome outcome = measurement.outcome;
  if (outcome == Outcome::kMeasured) return;
  recent_failures_.push_back(fmt::format("{}: {} ({})", graph_.Node(job.node).mutation, ToString(outcome),
                                         FirstLine(measurement.reason).substr(0, 160)));
  if (recent_failures_.size() > 5) recent_failures_.pop_front();
  if (outcome != Outcome::kBuildFailed && outcome != Outcome::kWrong && outcome != Outcome::kCrashed) return;
  const auto made_by = made_by_.find(job.node);
  if (made_by == made_by_.end() || !mutators_[static_cast<std::size_t>(made_by->second)]->CanFix()) return;
  const auto depth = fix_depth_.find(job.node);
  if ((depth == fix_depth_.end() ? 0 : depth->second) >= config_.max_fix_rounds) return;
  fixes_.push_back({WorkItem::Kind::kFix, job.node, rng_(), std::make_shared<const Measurement>(measurement)});
}

void Engine::Impl::StoreCalls(Event& event, std::optional<NodeId> node) {
  for (const std::string& stop : event.stops) {
    (void)store_.AddRunEvent(options_.run_id, "mutator_stopped", nlohmann::json{{"reason", stop}}.dump());
    if (options_.progress) *options_.progress << "kestrel: " << stop << "; the search goes on without it\n" << std::flush;
  }
  for (LlmCallRecord& call : event.calls) {
    call.run_id = options_.run_id;
    call.node_id = node;
    if (auto id = store_.AddLlmCall(call); !id) Fatal(id.error());
  }
  event.calls.clear();
  event.stops.clear();
}

void Engine::Impl::FillContextLocked(ParentView& parent) const {
  const auto result_of = [this](NodeId id) {
    const GraphNode& node = graph_.Node(id);
    if (node.status == NodeStatus::kMeasured && node.speedup) return fmt::format("{:.2f}x", *node.speedup);
    return std::string(ToString(node.status));
  };
  parent.measurement = result_of(parent.id) + " speedup over the reference";
  for (NodeId id : graph_.Lineage(parent.id)) {
    parent.lineage.push_back({graph_.Node(id).mutation, result_of(id)});
  }
  for (NodeId id : graph_.Best(4)) {
    if (id == parent.id || parent.inspirations.size() >= 2) continue;
    const auto ref = candidates_.find(id);
    if (ref != candidates_.end() && *ref->second.source != parent.candidate.source) {
      parent.inspirations.push_back(fmt::format("// {} ({})\n{}", graph_.Node(id).mutation, result_of(id),
                                                *ref->second.source));
    }
  }
  parent.recent_failures.assign(recent_failures_.begin(), recent_failures_.end());
}

void Engine::Impl::Progress(const Job& job, const Measurement& measurement) {
  if (!options_.progress) return;
  const auto best = graph_.Best(1);
  const double best_speedup = best.empty() ? 0.0 : *graph_.Node(best[0]).speedup;
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  std::string result = measurement.outcome == Outcome::kMeasured
                           ? fmt::format("{:.2f}x", measurement.speedup)
                           : std::string(ToString(measurement.outcome)) + " (" + FirstLine(measurement.reason) + ")";
  std::string left;
  if (config_.budget.time) {
    left = fmt::format("  {:.0f}s left", std::max(0.0, config_.budget.time->count() - options_.spent_seconds - elapsed));
  }
  *options_.progress << fmt::format("[{:>5}] node {:<6} {:<40} best {:.2f}x  {}{}\n", summary_.evaluations, job.node,
                                    result.substr(0, 40), best_speedup, graph_.Node(job.node).label, left)
                     << std::flush;
}

Result<RunSummary> Engine::Impl::Run() {
  start_ = Clock::now();
  summary_.run_id = options_.run_id;
  if (auto status = LoadGraph(); !status) return Fail(status.error());
  if (auto status = AddSeeds(); !status) return Fail(status.error());
  (void)store_.AddRunEvent(options_.run_id, "start",
                           nlohmann::json{{"nodes", graph_.NodeCount()}, {"pending", pending_.size()}}.dump());

  const int mutate_jobs = 4;
  const int threads = 2 + mutate_jobs + config_.parallel.compile_jobs + config_.parallel.measure_slots;
  // Stages block on subprocesses, so the arena has a thread for each slot,
  // whatever the core count.
  tbb::global_control thread_limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
  tbb::task_arena arena(threads);
  arena.execute([&] {
    flow::graph graph;
    flow::input_node<WorkItem> select(graph, [this](tbb::flow_control& control) { return Next(control); });
    flow::limiter_node<WorkItem> limiter(graph, static_cast<std::size_t>(config_.parallel.InFlight()));
    flow::function_node<WorkItem, Event> mutate(graph, mutate_jobs, [this](const WorkItem& item) { return Mutate(item); });
    using RecordNode = flow::multifunction_node<Event, std::tuple<Job, Job, flow::continue_msg>>;
    RecordNode record(graph, flow::serial, [this](const Event& event, RecordNode::output_ports_type& ports) {
      Event copy = event;
      Job job;
      Route route = Route::kDone;
      try {
        route = Record(copy, job);
      } catch (const std::exception& error) {
        std::lock_guard lock(mutex_);
        Fatal(Error::Internal(std::string("record stage: ") + error.what()));
      }
      if (route == Route::kBuild) std::get<0>(ports).try_put(job);
      if (route == Route::kMeasure) std::get<1>(ports).try_put(job);
      if (route == Route::kDone) {
        {
          std::lock_guard lock(mutex_);
          --in_flight_;
        }
        changed_.notify_all();
        std::get<2>(ports).try_put(flow::continue_msg());
      }
    });
    flow::function_node<Job, Event> build(
        graph, static_cast<std::size_t>(config_.parallel.compile_jobs), [this](const Job& job) {
          Event event;
          event.job = job;
          try {
            event.job.build = evaluator_.Build(job.candidate);
            event.kind = event.job.build.ok ? Event::Kind::kBuilt : Event::Kind::kMeasured;
            if (!event.job.build.ok) event.measurement = evaluator_.Measure(job.candidate, event.job.build);
          } catch (const std::exception& error) {
            event.kind = Event::Kind::kMeasured;
            event.measurement.outcome = Outcome::kRejected;
            event.measurement.reason = std::string("evaluator error during build: ") + error.what();
          }
          return event;
        });
    flow::function_node<Job, Event> measure(
        graph, static_cast<std::size_t>(config_.parallel.measure_slots), [this](const Job& job) {
          Event event;
          event.kind = Event::Kind::kMeasured;
          event.job = job;
          try {
            event.measurement = evaluator_.Measure(job.candidate, job.build);
          } catch (const std::exception& error) {
            event.measurement.outcome = Outcome::kRejected;
            event.measurement.reason = std::string("evaluator error: ") + error.what();
          }
          return event;
        });
    flow::make_edge(select, limiter);
    flow::make_edge(limiter, mutate);
    flow::make_edge(mutate, record);
    flow::make_edge(flow::output_port<0>(record), build);
    flow::make_edge(build, record);
    flow::make_edge(flow::output_port<1>(record), measure);
    flow::make_edge(measure, record);
    flow::make_edge(flow::output_port<2>(record), limiter.decrementer());
    select.activate();
    graph.wait_for_all();
  });

  std::lock_guard lock(mutex_);
  summary_.stop_reason = stop_reason_.value_or("exhausted");
  summary_.interrupted = summary_.stop_reason == "signal";
  summary_.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  if (const auto best = graph_.Best(1); !best.empty()) {
    summary_.best_node = best[0];
    summary_.best_speedup = *graph_.Node(best[0]).speedup;
  }
  const bool failed = summary_.stop_reason.rfind("error:", 0) == 0;
  const std::string status = failed ? "failed" : summary_.interrupted ? "interrupted" : "finished";
  (void)store_.AddRunEvent(options_.run_id, "stop",
                           nlohmann::json{{"reason", summary_.stop_reason}, {"evaluations", summary_.evaluations}}.dump());
  if (auto finished = store_.FinishRun(options_.run_id, status, summary_.stop_reason); !finished) {
    return Fail(finished.error());
  }
  if (failed) return Fail(Error::Io(summary_.stop_reason));
  return summary_;
}

Engine::Engine(Store& store, const Task& task, Evaluator& evaluator, const RunConfig& config,
               std::vector<std::unique_ptr<Mutator>> mutators, std::unique_ptr<Strategy> strategy,
               EngineOptions options)
    : impl_(std::make_unique<Impl>(store, task, evaluator, config, std::move(mutators), std::move(strategy), options)) {}
Engine::~Engine() = default;
Result<RunSummary> Engine::Run() { return impl_->Run(); }
const SearchGraph& Engine::graph() const { return impl_->graph(); }

}  // namespace kestrel
