#include "search/engine/engine.h"

#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include <chrono>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/check.h"
#include "search/engine/engine_impl.h"
#include "core/stop.h"

namespace kestrel {

namespace flow = tbb::flow;
using engine::Clock;
using engine::Event;
using engine::Job;
using engine::WorkItem;

Engine::Impl::Impl(Store& store, const Task& task, Evaluator& evaluator, const RunConfig& config,
                   std::vector<std::unique_ptr<Mutator>> mutators, std::unique_ptr<Strategy> strategy,
                   EngineOptions options)
    : store_(store),
      task_(task),
      evaluator_(evaluator),
      config_(config),
      mutators_(std::move(mutators)),
      strategy_(std::move(strategy)),
      advisor_(strategy_->Advisor()),
      options_(std::move(options)),
      run_seed_(config.seed ^ (static_cast<std::uint64_t>(options_.run_id) * 0x9e3779b97f4a7c15ULL)),
      progress_(options_.progress, options_.progress_mode, options_.log_interval_s),
      device_slots_(std::clamp(config.parallel.measure_slots, 1, 256)),
      state_(store, options_.graph_id, options_.run_id, options_.host_id),
      graph_(state_.graph()) {
  KESTREL_CHECK(options_.budget != nullptr, "an engine needs its run's budget");
  // The strategy's journal goes with every saved state (SaveStateLocked).
  engine::GraphState::Journal journal;
  journal.pending = [this] {
    const nlohmann::json& pending = strategy_->PendingJournal();
    return pending.empty() ? std::string() : pending.dump();
  };
  journal.snapshot = [this] { return strategy_->JournalSnapshot().dump(); };
  journal.stored = [this] { strategy_->JournalStored(); };
  journal.compact_rows = options_.journal_compact_rows;
  state_.SetJournal(std::move(journal));
}

Result<RunSummary> Engine::Impl::Run() {
  // During the run a broken invariant throws InvariantError: the stage that
  // meets it stops the run ("error: internal error at ...") and the run ends
  // as `failed` with its state saved, instead of aborting mid-write.
  ThrowingChecks throwing_checks;
  start_ = Clock::now();
  summary_.run_id = options_.run_id;
  try {
    // A run that cannot start ends as failed with the reason, not left
    // `running` for `kestrel runs`, `resume` and `steer` to trip over.
    Status started = LoadGraph();
    if (started) started = AddSeeds();
    if (started) started = RestoreState();
    if (started && options_.stopped) stop_reason_ = *options_.stopped;
    if (!started) {
      (void)store_.FinishRun(options_.run_id, RunStatus::kFailed,
                             ToString(StopReason::Error("could not start: " + started.error().message())));
      return Fail(started.error());
    }
  } catch (const InvariantError& error) {
    const std::string reason = ToString(StopReason::Error(error.what()));
    (void)store_.FinishRun(options_.run_id, RunStatus::kFailed, reason);
    return Fail(Error::Internal(reason));
  }
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
      Job job;
      switch (RecordStage(event, job)) {
        case Route::kBuild: std::get<0>(ports).try_put(job); break;
        case Route::kMeasure: std::get<1>(ports).try_put(job); break;
        case Route::kDone: std::get<2>(ports).try_put(flow::continue_msg()); break;
      }
    });
    flow::function_node<Job, Event> build(graph, static_cast<std::size_t>(config_.parallel.compile_jobs),
                                          [this](const Job& job) { return BuildStage(job); });
    flow::function_node<Job, Event> measure(graph, static_cast<std::size_t>(config_.parallel.measure_slots),
                                            [this](const Job& job) { return MeasureStage(job); });
    flow::make_edge(select, limiter);
    flow::make_edge(limiter, mutate);
    flow::make_edge(mutate, record);
    flow::make_edge(flow::output_port<0>(record), build);
    flow::make_edge(build, record);
    flow::make_edge(flow::output_port<1>(record), measure);
    flow::make_edge(measure, record);
    flow::make_edge(flow::output_port<2>(record), limiter.decrementer());
    std::jthread watcher([this](std::stop_token stop) { Watch(stop); });
    select.activate();
    try {
      graph.wait_for_all();
    } catch (const std::exception& error) {
      // An exception that escaped a stage cancelled the flow graph.
      std::lock_guard lock(mutex_);
      StopLocked(StopReason::Error(error.what()));
    }
    {
      std::lock_guard lock(mutex_);
      summary_.search_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    }
    try {
      FinalConfirmation();  // not after an error stop
      ProfileTop();
    } catch (const InvariantError& error) {
      std::lock_guard lock(mutex_);
      StopLocked(StopReason::Error(error.what()));
    }
    watcher.request_stop();
    changed_.notify_all();
  });

  std::lock_guard lock(mutex_);
  // A signal during the final confirmation or the profiles (after a budget
  // stopped the search): the run is interrupted, and its resume confirms.
  if (StopRequested() && (!stop_reason_ || stop_reason_->kind != StopKind::kError)) stop_reason_ = StopKind::kSignal;
  progress_.Finish(SnapshotLocked());
  summary_.stop_reason = stop_reason_.value_or(StopKind::kExhausted);
  summary_.interrupted = summary_.stop_reason.kind == StopKind::kSignal;
  summary_.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  if (incumbent_ != 0) {
    summary_.best_node = incumbent_;
    summary_.best_speedup = graph_.Node(incumbent_).speedup.value_or(0.0);
  }
  const bool failed = summary_.stop_reason.kind == StopKind::kError;
  const std::string reason = ToString(summary_.stop_reason);
  const RunStatus status = failed                ? RunStatus::kFailed
                           : summary_.interrupted ? RunStatus::kInterrupted
                                                  : RunStatus::kFinished;
  (void)store_.AddRunEvent(options_.run_id, "stop",
                           engine::EventJson({{"reason", reason},
                                                             {"evaluations", summary_.evaluations},
                                                             {"duplicates", summary_.duplicates},
                                                             {"same_code", summary_.same_code},
                                                             {"profiles", summary_.profiles},
                                                             {"hidden_checks", summary_.hidden_checks},
                                                             {"hidden_failures", summary_.hidden_failures}}));
  if (auto finished = store_.FinishRun(options_.run_id, status, reason); !finished) {
    return Fail(finished.error());
  }
  if (failed) return Fail(Error::Io(reason));
  return summary_;
}

Engine::Impl::Route Engine::Impl::RecordStage(const Event& event, Job& out) {
  Event copy = event;
  Route route = Route::kDone;
  try {
    route = Record(copy, out);
  } catch (const std::exception& error) {
    std::lock_guard lock(mutex_);
    Fatal(Error::Internal(std::string("record stage: ") + error.what()));
  }
  if (route == Route::kDone) {
    {
      std::lock_guard lock(mutex_);
      --in_flight_;
    }
    changed_.notify_all();
  }
  return route;
}

Engine::Impl::Event Engine::Impl::BuildStage(const Job& job) {
  engine::Measured failed;
  failed.job = job;
  try {
    failed.job.build = evaluator_.Build(job.candidate);
    if (failed.job.build.ok) return engine::Built{std::move(failed.job)};
    if (failed.job.build.withdrawn) {  // at a stop: no verdict, left as it was for the next run
      failed.deferred = true;
      return failed;
    }
    failed.measurement = evaluator_.Measure(job.candidate, failed.job.build);
  } catch (const std::exception& error) {
    failed.measurement.outcome = Outcome::kRejected;
    failed.measurement.reason = std::string("evaluator error during build: ") + error.what();
    if (dynamic_cast<const InvariantError*>(&error)) failed.fatal = error.what();
  }
  return failed;
}

Engine::Impl::Event Engine::Impl::MeasureStage(const Job& job) {
  engine::Measured result;
  result.job = job;
  {
    // Out of time (when it was built, or while it waited for a slot): not
    // measured now; it stays `built`, and the next run of the task (or
    // kestrel resume) measures it first. A queue of built candidates is not
    // measured past the budget, each a full measurement.
    std::lock_guard lock(mutex_);
    if (const auto reason = StopReasonLocked(); reason && reason->kind == StopKind::kTime) {
      result.deferred = true;
      return result;
    }
  }
  engine::DeviceSlot slot(device_slots_);
  try {
    result.measurement = evaluator_.Measure(job.candidate, job.build);
  } catch (const std::exception& error) {
    result.measurement.outcome = Outcome::kRejected;
    result.measurement.reason = std::string("evaluator error: ") + error.what();
    if (dynamic_cast<const InvariantError*>(&error)) result.fatal = error.what();
  }
  try {
    CheckHiddenShapes(result);
  } catch (const std::exception& error) {
    if (dynamic_cast<const InvariantError*>(&error)) result.fatal = error.what();
  }
  // Its job (or its hidden check's) withdrawn from a cluster's queue at a
  // stop: no verdict, the candidate stays `built`.
  if (result.measurement.withdrawn) {
    result.deferred = true;
    return result;
  }
  try {
    Confirm(result);
  } catch (const std::exception& error) {
    result.confirmations.clear();  // unconfirmed: judged without a round
    if (dynamic_cast<const InvariantError*>(&error)) result.fatal = error.what();
  }
  try {
    result.profile = ProfileChallenger(result.job, result.measurement);
  } catch (const std::exception& error) {
    std::lock_guard lock(mutex_);
    ReleaseProfileLocked(result.job.node, false);
    if (dynamic_cast<const InvariantError*>(&error)) result.fatal = error.what();
  }
  return result;
}

Engine::Engine(Store& store, const Task& task, Evaluator& evaluator, const RunConfig& config,
               std::vector<std::unique_ptr<Mutator>> mutators, std::unique_ptr<Strategy> strategy,
               EngineOptions options)
    : impl_(std::make_unique<Impl>(store, task, evaluator, config, std::move(mutators), std::move(strategy), options)) {}
Engine::~Engine() = default;
Result<RunSummary> Engine::Run() { return impl_->Run(); }
const SearchGraph& Engine::graph() const { return impl_->graph(); }

}  // namespace kestrel
