// Engine benchmarks: what the engine itself costs per candidate, and how well
// its pipeline keeps the slowest stage busy. Real SQLite files in a temporary
// directory, the real Engine, strategy (the default, model) and knob mutator; only the
// evaluator is an in-process stand-in (no compiler, no runner).
//
// The task's seed declares 7 knobs of 8 values (8^7 = 2,097,152 candidates),
// so a graph of a million distinct nodes fits in its knob space.
//
//   BM_EngineOverhead/nodes:N/evals:E
//       A graph of N measured nodes (built once per process, copied afresh for
//       each iteration), a zero-cost evaluator, default parallelism (2 compile
//       jobs, 1 measure slot, 4 in flight), an evaluation budget of E. The
//       engine's cost per candidate (select + mutate + record with its store
//       transactions + the flow graph's hops) is the mean time between
//       consecutive results, from the first to the last; the one-time start
//       (loading the graph, the strategy's first pass, the first candidate's
//       latency) is kept apart. The reported time is the per-candidate cost.
//       Counters:
//         per_candidate_us      that cost, wall clock
//         per_candidate_cpu_us  CPU time of every thread of the process over
//                               the same window, per candidate (a loaded
//                               machine disturbs it least)
//         startup_ms            from the Engine's construction to the first
//                               result
//         run_ms                the whole Run
//         load_ms               from the Engine's construction to its first
//                               Select: loading the graph, seeds, run rows
//         first_select_ms       that first Select (the strategy builds its
//                               index), wall clock
//         select_us, select_cpu_us
//                               the mean of the later Selects (each made
//                               under the engine's mutex): wall, thread CPU
//         store_writes_us, store_writes_cpu_us
//                               after the run, on its store: the four store
//                               transactions `record` makes per candidate
//                               (AddNode with its edge, SetNodeStatus built,
//                               RecordMeasurement of 1 shape x 10 samples,
//                               SaveRunState), wall and thread CPU
//   BM_PipelineUtilization/<case>
//       An evaluator whose Build sleeps Tb and Measure sleeps Tm, with
//       compile_jobs J, measure_slots M and max_in_flight F, on a fresh store
//       holding only the seed. The bound is min(J/Tb, M/Tm) candidates per
//       second (mutate, 4 jobs of the near-zero-cost knob mutator, is never the
//       bound). The reported time is the wall time of Engine::Run. Counters:
//         achieved_per_s       steady-state throughput: results per second
//                              from the result at the 10th percentile to the
//                              last
//         bound_per_s          min(J/Tb, M/Tm) with Tb and Tm the mean
//                              service times as they were (a sleep overshoots
//                              its nominal time, more so on a busy machine)
//         utilization          achieved_per_s / bound_per_s (target >= 0.9)
//         utilization_nominal  achieved_per_s over the bound of the nominal
//                              Tb and Tm
//         utilization_e2e      evaluations / Run's wall time, over
//                              bound_per_s: with the serial first candidate
//                              (the seed), the pipeline's fill and drain
//         in_flight            the cap in effect
//         in_flight_bound_per_s  in_flight / (Tb + Tm): what the cap alone
//                              allows (Little's law)
//
// The CPU column of these manual-time rows is the main thread's over a whole
// iteration (loading included): read the counters instead.
//
// Runtime: 2.5-3 minutes on a busy 2-core machine, 3 GB of memory at most;
// half of it is the 1e6-node size (building its store, ~15-30 s; the engine
// loading it, ~5 s): --benchmark_filter='nodes:(1000|100000)/|Pipeline'
// skips that size.
#include <benchmark/benchmark.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "evaluators/evaluator.h"
#include "search/engine/engine.h"
#include "search/mutators/mutator.h"
#include "search/run_config.h"
#include "search/strategies/strategy.h"
#include "store/store.h"
#include "tests/testing.h"

namespace kestrel {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }
double Seconds(Clock::duration duration) { return std::chrono::duration<double>(duration).count(); }

double CpuSeconds(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}
// CPU time of the whole process (every thread), and of the calling thread.
double ProcessCpuSeconds() { return CpuSeconds(CLOCK_PROCESS_CPUTIME_ID); }
double ThreadCpuSeconds() { return CpuSeconds(CLOCK_THREAD_CPUTIME_ID); }

template <class T>
T OrDie(Result<T> result, const char* what) {
  if (!result) {
    std::fprintf(stderr, "engine_bench: %s: %s\n", what, result.error().message().c_str());
    std::abort();
  }
  return std::move(*result);
}

void OrDie(const Status& status, const char* what) {
  if (!status) {
    std::fprintf(stderr, "engine_bench: %s: %s\n", what, status.error().message().c_str());
    std::abort();
  }
}

// Process-wide scratch space for the cached stores.
testing::TempDir& Scratch() {
  static testing::TempDir dir;
  return dir;
}

// --- the task: 7 knobs of 8 values ----------------------------------------------

constexpr int kKnobs = 7;
constexpr int kValues = 8;  // a power of two: a configuration is 3 bits per knob
constexpr std::uint32_t kSpace = 1u << (3 * kKnobs);  // 2,097,152
// Odd, so that i -> i * kStride mod kSpace is a bijection: the i-th node of
// a pre-built graph gets configuration i * kStride, all distinct, the 0th the
// all-defaults seed.
constexpr std::uint32_t kStride = 0x9E3B5;

const std::string& SeedSource() {
  static const std::string source = [] {
    std::string text;
    for (int k = 0; k < kKnobs; ++k) text += "// kestrel:knob K" + std::to_string(k) + " 0 1 2 3 4 5 6 7\n";
    text += "void bench(const float* x, float* y, long n) { for (long i = 0; i < n; ++i) y[i] = x[i]; }\n";
    return text;
  }();
  return source;
}

Task BenchTask() {
  Task task;
  task.name = "engine_bench";
  task.description = "a task the in-process bench evaluator judges";
  task.language = "cpp";
  task.entry = "bench";
  task.shapes = {{{"n", 1000}}};
  task.spec_text = R"({"name": "engine_bench", "entry": "bench"})";
  task.reference = {"reference.cpp", "void bench(const float*, float*, long) {}\n"};
  task.seeds = {{"seed.cpp", SeedSource()}};
  return task;
}

KnobValues KnobsOf(std::uint32_t config) {
  KnobValues knobs;
  for (int k = 0; k < kKnobs; ++k) knobs["K" + std::to_string(k)] = std::to_string((config >> (3 * k)) & 7u);
  return knobs;
}

// A smooth landscape with one optimum (K_k = 3k mod 8), speedups 0.6..1.3.
double SpeedupOf(const KnobValues& knobs) {
  double speedup = 0.6;
  int k = 0;
  for (const auto& [name, value] : knobs) {  // K0..K6, in order
    const int distance = std::abs(std::atoi(value.c_str()) - (3 * k) % kValues);
    speedup += 0.1 * (1.0 - distance / 7.0);
    ++k;
  }
  return speedup;
}

// One shape of 10 samples, like a short real measurement.
Measurement MeasurementFor(double speedup) {
  Measurement m;
  m.outcome = Outcome::kMeasured;
  ShapeTiming timing;
  timing.shape = {{"n", 1000}};
  for (int i = 0; i < 10; ++i) {
    timing.reference_seconds.push_back(1e-3 * (1.0 + 0.01 * i));
    timing.candidate_seconds.push_back(1e-3 * (1.0 + 0.01 * i) / speedup);
  }
  timing.candidate = Summarize(timing.candidate_seconds);
  timing.reference = Summarize(timing.reference_seconds);
  timing.speedup = speedup;
  m.shapes.push_back(std::move(timing));
  m.speedup = speedup;
  m.input_sets = 1;
  return m;
}

// --- the evaluator ---------------------------------------------------------------

constexpr char kToolchain[] = "bench-cc 1.0";
constexpr char kFlag[] = "-O2";

// In process: Build sleeps `build`, Measure sleeps `measure` (zero: returns at
// once) and returns the landscape's speedup. Records when each Measure ends.
// Not the tests' FakeEvaluator: that one hashes and counts every candidate's
// identity per call (a cost this bench would read as the engine's) and times
// nothing, while the pipeline's bound is computed from the service times and
// finishes recorded here.
class BenchEvaluator final : public Evaluator {
 public:
  BenchEvaluator(std::chrono::microseconds build, std::chrono::microseconds measure)
      : build_(build), measure_(measure), template_(MeasurementFor(1.0)) {
    host_.name = "bench-host";
    host_.cpu_model = "Bench CPU";
    host_.cores = 1;
    finished_.reserve(4096);
  }

  BuildResult Build(const Candidate& /*candidate*/) override {
    const auto start = Clock::now();
    if (build_.count() > 0) std::this_thread::sleep_for(build_);
    build_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
    ++builds_;
    BuildResult result;
    result.ok = true;
    result.library = "/nonexistent/bench.so";
    result.seconds = static_cast<double>(build_.count()) * 1e-6;
    return result;
  }

  Measurement Measure(const Candidate& candidate, const BuildResult& build) override {
    const auto start = Clock::now();
    if (measure_.count() > 0) std::this_thread::sleep_for(measure_);
    Measurement m = template_;
    m.speedup = SpeedupOf(candidate.knobs);
    m.shapes[0].speedup = m.speedup;
    m.build_seconds = build.seconds;
    m.eval_seconds = static_cast<double>(measure_.count()) * 1e-6;
    const Finish finish{Clock::now(), ProcessCpuSeconds()};
    measure_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(finish.at - start).count();
    std::lock_guard lock(mutex_);
    finished_.push_back(finish);
    return m;
  }

  std::string Toolchain() const override { return kToolchain; }
  std::vector<std::string> Flags() const override { return {kFlag}; }
  const HostInfo& Host() const override { return host_; }

  // When a Measure ended: wall clock and the process's CPU time (all threads).
  struct Finish {
    Clock::time_point at;
    double cpu_seconds;
  };
  std::vector<Finish> Finished() const {
    std::lock_guard lock(mutex_);
    return finished_;
  }
  // Mean service times as they were (a sleep overshoots, more so on a busy
  // machine), in seconds.
  double MeanBuildSeconds() const { return builds_ ? build_ns_ * 1e-9 / builds_ : 0.0; }
  double MeanMeasureSeconds() const {
    std::lock_guard lock(mutex_);
    return finished_.empty() ? 0.0 : measure_ns_ * 1e-9 / static_cast<double>(finished_.size());
  }

 private:
  std::chrono::microseconds build_, measure_;
  Measurement template_;
  HostInfo host_;
  mutable std::mutex mutex_;
  std::vector<Finish> finished_;
  std::atomic<std::int64_t> build_ns_{0}, builds_{0}, measure_ns_{0};
};

Candidate CandidateOf(std::uint32_t config) { return {SeedSource(), KnobsOf(config), kToolchain, {kFlag}}; }

// --- stores ----------------------------------------------------------------------

struct StoreIds {
  std::int64_t task_id = 0, graph_id = 0, host_id = 0;
};

StoreIds PrepareStore(Store& store, const Task& task) {
  StoreIds ids;
  ids.task_id = OrDie(store.UpsertTask(task), "UpsertTask");
  ids.graph_id = OrDie(store.GraphForTask(ids.task_id, false), "GraphForTask");
  ids.host_id = OrDie(store.UpsertHost(BenchEvaluator({}, {}).Host()), "UpsertHost");
  return ids;
}

std::int64_t CreateRun(Store& store, const StoreIds& ids, const std::string& config_json) {
  RunRecord run;
  run.task_id = ids.task_id;
  run.graph_id = ids.graph_id;
  run.host_id = ids.host_id;
  run.config_json = config_json;
  return OrDie(store.CreateRun(run), "CreateRun");
}

void SqliteOrDie(sqlite3* db, int code, const char* what) {
  if (code != SQLITE_OK && code != SQLITE_DONE && code != SQLITE_ROW) {
    std::fprintf(stderr, "engine_bench: %s: %s\n", what, sqlite3_errmsg(db));
    std::abort();
  }
}

void Exec(sqlite3* db, const char* sql) { SqliteOrDie(db, sqlite3_exec(db, sql, nullptr, nullptr, nullptr), sql); }

// Inserts a graph of `nodes` nodes (ids 1..nodes: the file must hold no node
// yet) and its edges in one transaction, with no journal: see GraphOf. Ids
// follow the identities' order (the seed first), and the edges their
// parents', so that the B-tree inserts into the unique indexes append
// instead of seeking: a third of the time.
void BulkInsertGraph(const std::filesystem::path& file, std::int64_t graph_id, std::int64_t run_id,
                     const std::string& source_hash, std::int64_t nodes) {
  struct Row {
    std::uint32_t config;
    std::string identity;
  };
  std::vector<Row> rows(static_cast<std::size_t>(nodes));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].config = static_cast<std::uint32_t>((static_cast<std::uint64_t>(i) * kStride) % kSpace);
    rows[i].identity = CandidateOf(rows[i].config).Identity();
  }
  std::sort(rows.begin() + 1, rows.end(), [](const Row& a, const Row& b) { return a.identity < b.identity; });
  // Row p (id p + 1) derives from a uniformly random earlier row.
  std::vector<std::pair<std::int64_t, std::int64_t>> edges;  // (parent id, child id)
  edges.reserve(rows.size());
  std::mt19937_64 random(42);
  for (std::size_t p = 1; p < rows.size(); ++p) {
    edges.emplace_back(static_cast<std::int64_t>(random() % p) + 1, static_cast<std::int64_t>(p) + 1);
  }
  std::sort(edges.begin(), edges.end());
  const auto mutation_of = [](std::int64_t id) {
    return id == 1 ? std::string("seed:seed.cpp") : "knob K" + std::to_string(id % kKnobs) + " 3->4";
  };

  sqlite3* db = nullptr;
  SqliteOrDie(db, sqlite3_open(file.c_str(), &db), "sqlite3_open");
  Exec(db, "PRAGMA journal_mode=DELETE");  // out of WAL, then no journal at all
  Exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-1048576; BEGIN");
  sqlite3_stmt* node_insert = nullptr;
  SqliteOrDie(db, sqlite3_prepare_v2(db, R"sql(
      INSERT INTO nodes (id, graph_id, run_id, identity, source_hash, knobs_json, toolchain, flags_json, mutation,
                         status, reason, log, speedup, created_at, updated_at)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, '', '', ?11, ?12, ?12))sql", -1, &node_insert, nullptr),
              "prepare nodes");
  const std::int64_t now = NowMillis();
  const std::string status(ToString(NodeStatus::kMeasured));
  const Candidate seed = CandidateOf(0);
  const std::string flags_json = nlohmann::json(seed.flags).dump();
  for (std::size_t p = 0; p < rows.size(); ++p) {
    const auto id = static_cast<std::int64_t>(p) + 1;
    const KnobValues knobs = KnobsOf(rows[p].config);
    const std::string knobs_json = nlohmann::json(knobs).dump();
    const std::string mutation = mutation_of(id);
    sqlite3_reset(node_insert);
    sqlite3_bind_int64(node_insert, 1, id);
    sqlite3_bind_int64(node_insert, 2, graph_id);
    sqlite3_bind_int64(node_insert, 3, run_id);
    sqlite3_bind_text(node_insert, 4, rows[p].identity.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(node_insert, 5, source_hash.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(node_insert, 6, knobs_json.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(node_insert, 7, seed.toolchain.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(node_insert, 8, flags_json.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(node_insert, 9, mutation.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(node_insert, 10, status.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_double(node_insert, 11, SpeedupOf(knobs));
    sqlite3_bind_int64(node_insert, 12, now);
    SqliteOrDie(db, sqlite3_step(node_insert), "insert node");
  }
  sqlite3_finalize(node_insert);
  sqlite3_stmt* edge_insert = nullptr;
  SqliteOrDie(db, sqlite3_prepare_v2(db, R"sql(
      INSERT INTO edges (parent_id, child_id, kind, run_id, mutation, created_at)
      VALUES (?1, ?2, 'derive', ?3, ?4, ?5))sql", -1, &edge_insert, nullptr),
              "prepare edges");
  for (const auto& [parent, child] : edges) {
    const std::string mutation = mutation_of(child);
    sqlite3_reset(edge_insert);
    sqlite3_bind_int64(edge_insert, 1, parent);
    sqlite3_bind_int64(edge_insert, 2, child);
    sqlite3_bind_int64(edge_insert, 3, run_id);
    sqlite3_bind_text(edge_insert, 4, mutation.c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_int64(edge_insert, 5, now);
    SqliteOrDie(db, sqlite3_step(edge_insert), "insert edge");
  }
  sqlite3_finalize(edge_insert);
  Exec(db, "COMMIT");
  Exec(db, "PRAGMA journal_mode=WAL");  // as the Store left it
  SqliteOrDie(db, sqlite3_close(db), "sqlite3_close");
}

// A store file holding a graph of `nodes` measured nodes, built once per
// process and size, closed (so that nothing of it is left in a WAL).
struct CachedGraph {
  std::filesystem::path file;
  StoreIds ids;
};

// Every node is measured, with its speedup (as RecordMeasurement leaves a
// node), and derives from a uniformly random earlier node. The task, graph,
// host, run and source rows go through the Store; the node and edge rows,
// too many for a transaction each (Store::AddNode alone takes ~0.1-0.4 ms
// here: minutes for a million), are inserted by a second SQLite connection
// in one transaction, column for column as Store::AddNode writes them, then
// read back through the Store. No measurement rows: the engine never reads
// them.
const CachedGraph& GraphOf(std::int64_t nodes) {
  static std::map<std::int64_t, CachedGraph> cache;
  if (auto it = cache.find(nodes); it != cache.end()) return it->second;
  const auto start = Clock::now();
  CachedGraph graph;
  graph.file = Scratch().path() / ("graph-" + std::to_string(nodes) + ".db");
  std::int64_t run_id = 0;
  std::string source_hash;
  {
    auto store = OrDie(Store::Open(graph.file), "Store::Open");
    graph.ids = PrepareStore(*store, BenchTask());
    run_id = CreateRun(*store, graph.ids, "{}");
    source_hash = OrDie(store->PutSource(SeedSource()), "PutSource");
    OrDie(store->FinishRun(run_id, RunStatus::kFinished, "evaluations"), "FinishRun");
  }
  BulkInsertGraph(graph.file, graph.ids.graph_id, run_id, source_hash, nodes);
  {
    auto store = OrDie(Store::Open(graph.file, Store::Mode::kReadOnly), "Store::Open");
    for (const std::uint32_t config : {0u, static_cast<std::uint32_t>((static_cast<std::uint64_t>(nodes - 1) * kStride) % kSpace)}) {
      const auto found = OrDie(store->FindNode(graph.ids.graph_id, CandidateOf(config).Identity()), "FindNode");
      const NodeRecord node = OrDie(store->GetNode(found.value_or(0)), "GetNode");
      if (node.status != NodeStatus::kMeasured || node.knobs != KnobsOf(config) || node.source != SeedSource() ||
          (config == 0 && node.id != 1)) {
        std::fprintf(stderr, "engine_bench: the bulk-inserted store does not read back as written\n");
        std::abort();
      }
    }
  }
  std::fprintf(stderr, "engine_bench: built a store of %lld nodes in %.1f s (%.0f MiB)\n",
               static_cast<long long>(nodes), SecondsSince(start),
               static_cast<double>(std::filesystem::file_size(graph.file)) / (1 << 20));
  return cache.emplace(nodes, std::move(graph)).first->second;
}

// A fresh copy of the cached graph's file, for one iteration to write into.
std::filesystem::path WorkCopy(const CachedGraph& graph) {
  const std::filesystem::path work = Scratch().path() / "work.db";
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(work.string() + suffix);
  std::filesystem::copy_file(graph.file, work);
  return work;
}

RunConfig BaseConfig(const Task& task) {
  RunConfig config;
  config.task = task.name;
  config.seed = 7;
  config.confirm.rounds = 0;  // the fake evaluator's results do not vary; the figures are of select and record
  return config;  // the default strategy (model), one knob mutator, compile_jobs 2, measure_slots 1
}

// The strategy the engine gets: the configured one, with each Select timed (the
// engine calls Select serially, under its mutex, so no lock is needed here).
class TimedStrategy final : public Strategy {
 public:
  struct Call {
    Clock::time_point start;
    double wall = 0.0, cpu = 0.0;  // seconds (cpu: the calling thread's)
  };

  explicit TimedStrategy(std::unique_ptr<Strategy> inner) : inner_(std::move(inner)) {}

  std::optional<NodeId> Select(const SearchGraph& graph, std::mt19937_64& rng) override {
    Call call{Clock::now()};
    const double cpu = ThreadCpuSeconds();
    auto chosen = inner_->Select(graph, rng);
    call.wall = SecondsSince(call.start);
    call.cpu = ThreadCpuSeconds() - cpu;
    calls_.push_back(call);
    return chosen;
  }
  Status RestoreState(const nlohmann::json& state) override { return inner_->RestoreState(state); }
  std::shared_ptr<KnobAdvisor> Advisor() const override { return inner_->Advisor(); }

  const std::vector<Call>& calls() const { return calls_; }

 protected:
  // The engine marks exhausted parents on this object; pass them on.
  void Exhausted(NodeId id) override { inner_->MarkExhausted(id); }
  void SaveOwn(nlohmann::json& state, StateParts parts) const override {
    const nlohmann::json inner = inner_->SaveState(parts);  // items() does not keep a temporary alive
    for (const auto& [key, value] : inner.items()) state[key] = value;
  }

 private:
  std::unique_ptr<Strategy> inner_;
  std::vector<Call> calls_;
};

struct RunResult {
  Clock::time_point start;  // before the Engine was made
  double seconds = 0.0;     // Engine construction and Run
  RunSummary summary;
  std::int64_t run_id = 0;
  std::vector<TimedStrategy::Call> selects;  // in order
};

RunResult RunEngine(Store& store, const StoreIds& ids, const Task& task, BenchEvaluator& evaluator,
                    const RunConfig& config) {
  RunResult result;
  result.run_id = CreateRun(store, ids, ToJson(config).dump());
  auto owned = std::make_unique<TimedStrategy>(OrDie(MakeStrategy(config.strategy), "MakeStrategy"));
  const TimedStrategy& timed = *owned;
  std::unique_ptr<Strategy> strategy = std::move(owned);
  std::vector<std::unique_ptr<Mutator>> mutators;
  mutators.push_back(MakeKnobMutator());
  EngineOptions options;
  options.run_id = result.run_id;
  options.graph_id = ids.graph_id;
  options.host_id = ids.host_id;
  options.budget = std::make_shared<Budget>(config.budget);
  result.start = Clock::now();
  Engine engine(store, task, evaluator, config, std::move(mutators), std::move(strategy), options);
  result.summary = OrDie(engine.Run(), "Engine::Run");
  result.seconds = SecondsSince(result.start);
  result.selects = timed.calls();
  return result;
}

// --- engine overhead per candidate -----------------------------------------------------

struct Cost {
  double wall = 0.0, cpu = 0.0;  // seconds (cpu: the calling thread's)
};

// The mean cost of the store transactions `record` makes for one candidate:
// AddNode with its edge, SetNodeStatus built, RecordMeasurement (1 shape x 10
// samples), SaveRunState; on new identities under random parents.
Cost TimeStoreWrites(Store& store, const StoreIds& ids, std::int64_t run_id, std::int64_t parents, int count) {
  const Measurement measurement = MeasurementFor(1.1);
  const std::string state_json =
      R"({"fixes":[],"selections":1234,"since_best":7,"strategy":{"exhausted":[]},"version":1})";
  std::mt19937_64 random(7);
  std::vector<NodeRecord> nodes;
  for (int i = 0; i < count; ++i) {
    Candidate candidate = CandidateOf(static_cast<std::uint32_t>(random() % kSpace));
    candidate.toolchain = "bench-cc writes " + std::to_string(i);  // an identity not in the graph
    NodeRecord& node = nodes.emplace_back();
    node.graph_id = ids.graph_id;
    node.run_id = run_id;
    node.identity = candidate.Identity();
    node.source = candidate.source;  // as the engine passes it: hashed, stored once
    node.knobs = candidate.knobs;
    node.toolchain = candidate.toolchain;
    node.flags = candidate.flags;
    node.mutation = "knob K1 2->3";
  }
  const auto start = Clock::now();
  const double cpu = ThreadCpuSeconds();
  for (const NodeRecord& node : nodes) {
    const EdgeRecord edge{static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(parents)) + 1, 0, EdgeKind::kDerive,
                          run_id, node.mutation, 0};
    const std::int64_t id = OrDie(store.AddNode(node, edge), "AddNode");
    OrDie(store.SetNodeStatus(id, NodeStatus::kBuilt, "", ""), "SetNodeStatus");
    benchmark::DoNotOptimize(OrDie(store.RecordMeasurement(id, run_id, ids.host_id, measurement), "RecordMeasurement"));
    OrDie(store.SaveRunState(run_id, state_json), "SaveRunState");
  }
  return {SecondsSince(start) / count, (ThreadCpuSeconds() - cpu) / count};
}

void BM_EngineOverhead(benchmark::State& state) {
  const std::int64_t nodes = state.range(0);
  const std::int64_t evaluations = state.range(1);
  const CachedGraph& graph = GraphOf(nodes);
  const Task task = BenchTask();
  double per_candidate = 0, per_candidate_cpu = 0, startup = 0, load = 0, run_seconds = 0;
  Cost select, first_select, writes;
  for (auto _ : state) {
    const std::filesystem::path work = WorkCopy(graph);
    auto store = OrDie(Store::Open(work), "Store::Open");
    BenchEvaluator evaluator({}, {});
    RunConfig config = BaseConfig(task);
    config.budget.evaluations = evaluations;
    const RunResult run = RunEngine(*store, graph.ids, task, evaluator, config);
    const auto results = evaluator.Finished();
    if (run.summary.evaluations != evaluations || results.size() < 2 || run.selects.size() < 2) {
      state.SkipWithError(("the run stopped early: " + ToString(run.summary.stop_reason)).c_str());
      break;
    }
    // From the first result to the last: the pipeline's steady rate.
    const double gaps = static_cast<double>(results.size() - 1);
    const double gap = Seconds(results.back().at - results.front().at) / gaps;
    state.SetIterationTime(gap);
    per_candidate += gap;
    per_candidate_cpu += (results.back().cpu_seconds - results.front().cpu_seconds) / gaps;
    startup += Seconds(results.front().at - run.start);
    load += Seconds(run.selects.front().start - run.start);
    run_seconds += run.seconds;
    first_select.wall += run.selects.front().wall;
    first_select.cpu += run.selects.front().cpu;
    Cost later;
    for (std::size_t i = 1; i < run.selects.size(); ++i) {
      later.wall += run.selects[i].wall;
      later.cpu += run.selects[i].cpu;
    }
    select.wall += later.wall / static_cast<double>(run.selects.size() - 1);
    select.cpu += later.cpu / static_cast<double>(run.selects.size() - 1);
    const Cost cost = TimeStoreWrites(*store, graph.ids, run.run_id, nodes, 100);
    writes.wall += cost.wall;
    writes.cpu += cost.cpu;
  }
  const double n = static_cast<double>(std::max<benchmark::IterationCount>(state.iterations(), 1));
  state.counters["per_candidate_us"] = per_candidate / n * 1e6;
  state.counters["per_candidate_cpu_us"] = per_candidate_cpu / n * 1e6;
  state.counters["select_us"] = select.wall / n * 1e6;
  state.counters["select_cpu_us"] = select.cpu / n * 1e6;
  state.counters["store_writes_us"] = writes.wall / n * 1e6;
  state.counters["store_writes_cpu_us"] = writes.cpu / n * 1e6;
  state.counters["startup_ms"] = startup / n * 1e3;
  state.counters["load_ms"] = load / n * 1e3;
  state.counters["first_select_ms"] = first_select.wall / n * 1e3;
  state.counters["run_ms"] = run_seconds / n * 1e3;
  state.counters["nodes"] = static_cast<double>(nodes);
}
BENCHMARK(BM_EngineOverhead)
    ->ArgNames({"nodes", "evals"})
    ->Args({1000, 200})->Iterations(5)
    ->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EngineOverhead)
    ->ArgNames({"nodes", "evals"})
    ->Args({100000, 100})->Iterations(2)
    ->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EngineOverhead)
    ->ArgNames({"nodes", "evals"})
    ->Args({1000000, 20})->Iterations(1)
    ->UseManualTime()->Unit(benchmark::kMicrosecond);

// --- pipeline utilization -------------------------------------------------------------

struct PipelineCase {
  const char* name;
  int build_ms, measure_ms;
  int compile_jobs, measure_slots;
  int max_in_flight;  // 0: the default, compile_jobs + measure_slots + 1
  int candidates;
};

void BM_PipelineUtilization(benchmark::State& state, PipelineCase c) {
  const Task task = BenchTask();
  RunConfig config = BaseConfig(task);
  config.parallel.compile_jobs = c.compile_jobs;
  config.parallel.measure_slots = c.measure_slots;
  config.parallel.max_in_flight = c.max_in_flight;
  config.budget.evaluations = c.candidates;
  // Candidates per second the slowest stage allows.
  const auto bound_of = [&c](double build_s, double measure_s) {
    return std::min(c.compile_jobs / build_s, c.measure_slots / measure_s);
  };
  const double nominal = bound_of(c.build_ms * 1e-3, c.measure_ms * 1e-3);
  double steady = 0, e2e = 0, bound = 0, in_flight_bound = 0;
  for (auto _ : state) {
    testing::TempDir dir;
    auto store = OrDie(Store::Open(dir.path() / "kestrel.db"), "Store::Open");
    const StoreIds ids = PrepareStore(*store, task);
    BenchEvaluator evaluator(std::chrono::milliseconds(c.build_ms), std::chrono::milliseconds(c.measure_ms));
    const RunResult result = RunEngine(*store, ids, task, evaluator, config);
    state.SetIterationTime(result.seconds);
    const auto finished = evaluator.Finished();
    if (result.summary.evaluations != c.candidates || finished.size() < 20) {
      state.SkipWithError(("the run stopped early: " + ToString(result.summary.stop_reason)).c_str());
      break;
    }
    // Steady state: from the result at the 10th percentile to the last.
    const std::size_t first = finished.size() / 10;
    const double window = Seconds(finished.back().at - finished[first].at);
    steady += static_cast<double>(finished.size() - 1 - first) / window;
    e2e += static_cast<double>(result.summary.evaluations) / result.seconds;
    bound += bound_of(evaluator.MeanBuildSeconds(), evaluator.MeanMeasureSeconds());
    in_flight_bound += config.parallel.InFlight() / (evaluator.MeanBuildSeconds() + evaluator.MeanMeasureSeconds());
  }
  const double n = static_cast<double>(std::max<benchmark::IterationCount>(state.iterations(), 1));
  steady /= n, e2e /= n, bound /= n, in_flight_bound /= n;
  state.counters["utilization"] = steady / bound;
  state.counters["utilization_nominal"] = steady / nominal;
  state.counters["utilization_e2e"] = e2e / bound;
  state.counters["achieved_per_s"] = steady;
  state.counters["bound_per_s"] = bound;
  state.counters["in_flight"] = config.parallel.InFlight();
  state.counters["in_flight_bound_per_s"] = in_flight_bound;
}

// Nominal bounds: 100/s, but 400/s for `wide` (the engine's own cost per
// candidate starts to count). The `in_flight:*` cases show the cap:
// throughput <= in_flight / (Tb + Tm + the engine's latency).
const PipelineCase kPipelineCases[] = {
    {"measure_bound", 2, 10, 2, 1, 0, 100},
    {"build_bound", 20, 2, 2, 1, 0, 100},
    {"balanced", 20, 10, 2, 1, 0, 100},
    {"balanced/in_flight:3", 20, 10, 2, 1, 3, 100},
    {"balanced/in_flight:8", 20, 10, 2, 1, 8, 100},
    {"wide", 10, 10, 4, 4, 0, 200},
    {"wide/in_flight:4", 10, 10, 4, 4, 4, 200},
    {"wide/in_flight:16", 10, 10, 4, 4, 16, 200},
    {"wide_slow", 40, 40, 4, 4, 0, 100},
};

}  // namespace
}  // namespace kestrel

int main(int argc, char** argv) {
  for (const auto& c : kestrel::kPipelineCases) {
    const std::string name = std::string("BM_PipelineUtilization/") + c.name +
                             "/build_ms:" + std::to_string(c.build_ms) + "/measure_ms:" + std::to_string(c.measure_ms) +
                             "/jobs:" + std::to_string(c.compile_jobs) + "/slots:" + std::to_string(c.measure_slots);
    benchmark::RegisterBenchmark(name.c_str(), kestrel::BM_PipelineUtilization, c)
        ->Iterations(2)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
