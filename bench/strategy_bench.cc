// Strategy efficiency: how many evaluations each strategy needs to come
// within 5% of the best configuration of a measured knob space, and to find
// the best configuration itself.
//
// The spaces were measured once, exhaustively, with the real CPU evaluator
// (scripts/measure_knob_space writes bench/data/TASK.json). A run replays
// one: the real Engine with the knob mutator and a SQLite store in a temp
// dir, and an in-process evaluator that returns the recorded outcome and
// speedup of each candidate's knob values. A run notes its first
// evaluation within 5% of the table's best and stops at the best itself
// (budget: the space's size). A table is named by its file (bench/data/
// NAME.json); it may cover some of its task's seeds (a seed kept out of the
// task's list, such as matmul/tiled.cpp): the run starts from those alone. One
// candidate is in flight at a time, so each selection sees every result but
// the one still in flight; the evaluator takes 1 ms per measurement so that
// this holds whatever the scheduling.
//
//   BM_Efficiency/TASK/STRATEGY  one iteration runs every seed; counters:
//     median_evals     median evaluations to come within 5% of the best
//     ratio_to_random  median_evals / random's median_evals
//     reached          runs that got there (a run that did not counts as the
//                      space's size)
//     best_median_evals, best_reached: the same, to the best configuration
//   BM_Select/STRATEGY/N         one selection (and the child it leads to) on
//                                a random tree of N nodes, half measured
//                                (N = 1e3, 1e5 and 1e6);
//                                first_select_ms: the first, which fills caches
//   BM_ReplaySnapshot/STRATEGY/N  a resume's cost of the strategy journal's
//                                snapshot row of N nodes: parse and replay
//   BM_SelectAndSave/STRATEGY/SAVE/N  the same, and the state saved as the
//                                engine saves it with every result: whole
//                                (before the journal) or with the journal;
//                                saved_bytes: the mean written
//
// After the benchmarks, markdown tables of the same figures on stdout.
// Flags besides Google Benchmark's: --seeds=N (default 20), --data=DIR
// (default: bench/data of the source tree), --target=F (default 0.95),
// --runs: instead of the tables, a line per run of the benchmarks selected
// ("run matmul_tiled model seed 7: within 5% at 12, the best at 31"), for
// counting the runs over a goal across many seeds, e.g.
//   strategy_bench --runs --seeds=300 --benchmark_filter='BM_Efficiency/cumsum_blocked/model/'

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/candidate.h"
#include "core/task.h"
#include "search/engine/engine.h"
#include "search/run_session.h"
#include "core/stop.h"
#include "search/knobs/source_ranker.h"
#include "search/strategies/strategy.h"
#include "store/store.h"

namespace kestrel {
namespace {

namespace fs = std::filesystem;

struct Options {
  int seeds = 20;
  fs::path data = BuiltinTasksDir().parent_path().parent_path() / "bench" / "data";
  double target = 0.95;
  bool runs = false;  // a line per run, no tables
};

Options& GetOptions() {
  static Options options;
  return options;
}

struct Entry {
  Outcome outcome = Outcome::kRejected;
  double speedup = 0.0;
};

// A measured knob space: per seed file, its knobs in declared order and the
// entry of each configuration ("A=1 B=2").
struct Space {
  Task task;
  std::map<std::string, std::vector<std::string>> knob_order;
  std::map<std::string, std::map<std::string, Entry>> configs;
  std::size_t size = 0;
  double best = 0.0;
  std::size_t near = 0;  // configurations within the target of the best
  std::vector<double> seed_speedups;  // each seed's default configuration (0: not measured)

  // Expected evaluations of uniform sampling without replacement to hit one of
  // `hits` configurations: (N + 1) / (hits + 1) from scratch; after the seeds
  // (every run evaluates their default configurations first), the seeds' count
  // when one is a hit, else that plus N' / (hits + 1) over the N' others.
  double UniformDraws(std::size_t hits) const { return static_cast<double>(size + 1) / static_cast<double>(hits + 1); }
  double UniformAfterSeeds(std::size_t hits, double threshold) const {
    const auto seeds = static_cast<double>(seed_speedups.size());
    for (double speedup : seed_speedups) {
      if (speedup >= threshold) return seeds;
    }
    return seeds + (static_cast<double>(size) - seeds + 1) / static_cast<double>(hits + 1);
  }
};

Result<Space> LoadSpace(const fs::path& table_path, double target) {
  const std::string where = table_path.string();
  std::ifstream in(table_path);
  if (!in) return Fail(Error::NotFound(where + ": cannot read"));
  Space space;
  try {
    const nlohmann::json table = nlohmann::json::parse(in);
    auto task = FindTask(table.at("task").get<std::string>(), TaskDirs({}));
    if (!task) return Fail(task.error().WithContext(where));
    space.task = std::move(*task);
    std::vector<SourceFile> seeds;  // the table's, from the task's folder
    for (const auto& [seed, entry] : table.at("seeds").items()) {
      // The table must describe the seed as it is now, and all of its space.
      std::ifstream seed_file(space.task.dir / seed);
      if (!seed_file) return Fail(Error::Corruption(where + ": the task has no seed " + seed));
      std::stringstream text;
      text << seed_file.rdbuf();
      seeds.push_back({seed, text.str()});
      const auto source = std::prev(seeds.end());
      auto declared = ParseKnobs(source->text);
      if (!declared) return Fail(declared.error().WithContext(where));
      std::size_t combinations = 1;
      std::vector<std::pair<std::string, std::vector<std::string>>> expected, recorded;
      for (const KnobSpec& knob : *declared) {
        expected.emplace_back(knob.name, knob.values);
        combinations *= knob.values.size();
      }
      for (const auto& knob : entry.at("knobs")) {
        recorded.emplace_back(knob.at("name").get<std::string>(), knob.at("values").get<std::vector<std::string>>());
        space.knob_order[seed].push_back(recorded.back().first);
      }
      if (recorded != expected || entry.at("configs").size() != combinations) {
        return Fail(Error::Corruption(where + ": " + seed + " declares other knobs than the table, or the table is " +
                                      "incomplete (run scripts/measure_knob_space " + space.task.name + ")"));
      }
      for (const auto& [key, result] : entry.at("configs").items()) {
        const auto outcome = ParseOutcome(result.at("outcome").get<std::string>());
        if (!outcome) return Fail(Error::Corruption(where + ": " + key + ": unknown outcome"));
        Entry replay{*outcome, result.value("speedup", 0.0)};
        space.configs[seed][key] = replay;
        ++space.size;
        if (replay.outcome == Outcome::kMeasured) space.best = std::max(space.best, replay.speedup);
      }
    }
    space.task.seeds = std::move(seeds);  // the run starts from these, and from no other
  } catch (const nlohmann::json::exception& error) {
    return Fail(Error::Corruption(where + ": " + error.what()));
  }
  for (const auto& [seed, configs] : space.configs) {
    for (const auto& [key, entry] : configs) {
      space.near += entry.outcome == Outcome::kMeasured && entry.speedup >= target * space.best;
    }
  }
  for (const SourceFile& seed : space.task.seeds) {
    auto declared = ParseKnobs(seed.text);
    std::string key;
    for (const KnobSpec& knob : *declared) key += (key.empty() ? "" : " ") + knob.name + "=" + knob.values.front();
    const auto& configs = space.configs.at(seed.name);
    const auto found = configs.find(key);
    space.seed_speedups.push_back(found != configs.end() && found->second.outcome == Outcome::kMeasured
                                      ? found->second.speedup
                                      : 0.0);
  }
  if (space.best <= 0) return Fail(Error::Corruption(where + ": no measured configuration"));
  return space;
}

// When a run first came within the target, and to the best (evaluation counts).
struct Reach {
  std::optional<int> near;
  std::optional<int> best;
};

// Replays a Space: Build and Measure return what the table recorded for the
// candidate's seed and knob values. It notes the first result within
// `target` of the best, and at the best itself requests the engine's stop.
class ReplayEvaluator final : public Evaluator {
 public:
  ReplayEvaluator(const Space& space, double target) : space_(space), threshold_(target * space.best) {
    host_.name = "replay";
    host_.cpu_model = "replayed from bench/data";
    host_.cores = 1;
  }

  BuildResult Build(const Candidate& candidate) override {
    BuildResult result;
    result.ok = Lookup(candidate).outcome != Outcome::kBuildFailed;
    result.library = "/nonexistent/replay.so";
    return result;
  }

  Measurement Measure(const Candidate& candidate, const BuildResult& /*build*/) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const Entry entry = Lookup(candidate);
    Measurement measurement;
    measurement.outcome = entry.outcome;
    measurement.input_sets = 1;
    if (entry.outcome == Outcome::kMeasured) {
      measurement.speedup = entry.speedup;
      ShapeTiming timing;
      timing.shape = space_.task.shapes.front();
      timing.reference_seconds = {1e-3};
      timing.candidate_seconds = {1e-3 / entry.speedup};
      timing.reference = Summarize(timing.reference_seconds);
      timing.candidate = Summarize(timing.candidate_seconds);
      timing.speedup = entry.speedup;
      measurement.shapes.push_back(timing);
    } else {
      measurement.reason = "replayed " + std::string(ToString(entry.outcome));
    }
    std::lock_guard lock(mutex_);
    ++evaluations_;
    if (!reach_.near && entry.outcome == Outcome::kMeasured && entry.speedup >= threshold_) reach_.near = evaluations_;
    if (!reach_.best && entry.outcome == Outcome::kMeasured && entry.speedup >= space_.best) {
      reach_.best = evaluations_;
      RequestStop();
    }
    return measurement;
  }

  std::string Toolchain() const override { return "replay"; }
  std::vector<std::string> Flags() const override { return {}; }
  const HostInfo& Host() const override { return host_; }

  Reach Reached() const {
    std::lock_guard lock(mutex_);
    return reach_;
  }

 private:
  Entry Lookup(const Candidate& candidate) const {
    for (const SourceFile& seed : space_.task.seeds) {
      if (seed.text != candidate.source) continue;
      std::string key;
      for (const std::string& name : space_.knob_order.at(seed.name)) {
        const auto value = candidate.knobs.find(name);
        if (value == candidate.knobs.end()) return {};
        key += (key.empty() ? "" : " ") + name + "=" + value->second;
      }
      const auto& configs = space_.configs.at(seed.name);
      const auto found = configs.find(key);
      return found == configs.end() ? Entry{} : found->second;
    }
    return {};  // a source the table does not know: rejected
  }

  const Space& space_;
  double threshold_;
  HostInfo host_;
  mutable std::mutex mutex_;
  int evaluations_ = 0;
  Reach reach_;
};

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "kestrel-strategy-bench-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// One search of `space` with `strategy` and `seed`: the evaluations it took
// to come within the target and to the best (nullopt: never).
Result<Reach> RunOnce(const Space& space, const std::string& strategy_name, std::uint64_t seed) {
  TempDir dir;
  auto store = Store::Open(dir.path() / "kestrel.db");
  if (!store) return Fail(store.error());
  ReplayEvaluator evaluator(space, GetOptions().target);
  RunConfig config;
  config.task = space.task.name;
  config.strategy.name = strategy_name;
  config.seed = seed;
  config.budget.evaluations = static_cast<std::int64_t>(space.size);
  config.parallel.compile_jobs = 1;
  config.parallel.measure_slots = 1;
  config.parallel.max_in_flight = 1;
  config.confirm.rounds = 0;  // replayed results do not vary: re-measuring them would count as evaluations here
  auto task_id = (*store)->UpsertTask(space.task);
  if (!task_id) return Fail(task_id.error());
  auto graph_id = (*store)->GraphForTask(*task_id, false);
  if (!graph_id) return Fail(graph_id.error());
  auto host_id = (*store)->UpsertHost(evaluator.Host());
  if (!host_id) return Fail(host_id.error());
  RunRecord run;
  run.task_id = *task_id;
  run.graph_id = *graph_id;
  run.host_id = *host_id;
  run.config_json = ToJson(config).dump();
  auto run_id = (*store)->CreateRun(run);
  if (!run_id) return Fail(run_id.error());
  auto strategy = MakeStrategy(config.strategy);
  if (!strategy) return Fail(strategy.error());
  auto budget = std::make_shared<Budget>(config.budget);
  auto mutators = MakeMutators(config, space.task, evaluator.Host(), budget);
  if (!mutators) return Fail(mutators.error());
  EngineOptions options;
  options.budget = budget;
  options.run_id = *run_id;
  options.graph_id = *graph_id;
  options.host_id = *host_id;
  ResetStop();
  Engine engine(**store, space.task, evaluator, config, std::move(*mutators), std::move(*strategy), options);
  auto summary = engine.Run();
  ResetStop();
  if (!summary) return Fail(summary.error());
  return evaluator.Reached();
}

// Evaluations per seed to one goal; the space's size for a run that never got there.
struct Goal {
  std::vector<int> evaluations;
  int reached = 0;
  void Add(std::optional<int> at, std::size_t size) {
    evaluations.push_back(at.value_or(static_cast<int>(size)));
    reached += at.has_value();
  }
  double Median() const {
    std::vector<int> sorted = evaluations;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    if (n == 0) return 0.0;
    return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
  }
  int Max() const { return evaluations.empty() ? 0 : *std::max_element(evaluations.begin(), evaluations.end()); }
};

struct Figures {
  Goal near;  // within the target of the best
  Goal best;  // the best itself
};

const std::vector<std::string>& Strategies() { return StrategyNames(); }

std::map<std::string, Space>& Spaces() {
  static std::map<std::string, Space> spaces;
  return spaces;
}

// Every seed of (task, strategy), once per process.
const Figures& FiguresFor(const std::string& task, const std::string& strategy) {
  static std::map<std::pair<std::string, std::string>, Figures> cache;
  const auto key = std::make_pair(task, strategy);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  Figures figures;
  const Space& space = Spaces().at(task);
  for (int seed = 1; seed <= GetOptions().seeds; ++seed) {
    auto reach = RunOnce(space, strategy, static_cast<std::uint64_t>(seed));
    if (!reach) {
      std::cerr << "strategy_bench: " << task << " " << strategy << " seed " << seed << ": "
                << reach.error().message() << "\n";
      std::exit(1);
    }
    figures.near.Add(reach->near, space.size);
    figures.best.Add(reach->best, space.size);
    if (GetOptions().runs) {
      const auto at = [](std::optional<int> evaluations) {
        return evaluations ? "at " + std::to_string(*evaluations) : std::string("never");
      };
      std::cout << fmt::format("run {} {} seed {}: within {:g}% {}, the best {}\n", task, strategy, seed,
                               std::round(100 * (1 - GetOptions().target)), at(reach->near), at(reach->best));
    }
  }
  return cache.emplace(key, std::move(figures)).first->second;
}

void BM_Efficiency(benchmark::State& state, const std::string& task, const std::string& strategy) {
  for (auto _ : state) benchmark::DoNotOptimize(FiguresFor(task, strategy).near.evaluations.data());
  const Figures& figures = FiguresFor(task, strategy);
  // (--runs: random sampling's runs only when selected)
  const double random = GetOptions().runs ? 0.0 : FiguresFor(task, "random").near.Median();
  state.counters["median_evals"] = figures.near.Median();
  state.counters["ratio_to_random"] = random > 0 ? figures.near.Median() / random : 0.0;
  state.counters["reached"] = figures.near.reached;
  state.counters["best_median_evals"] = figures.best.Median();
  state.counters["best_reached"] = figures.best.reached;
  state.counters["space"] = static_cast<double>(Spaces().at(task).size);
}

// Ranking an LLM reply's versions by code features (issue 17; the llm
// mutator's `variants`), replayed on a measured knob space with every
// configuration written out as a source without knobs (SubstituteKnobs: the
// values become #define lines, as a rewrite's constants would be): each
// "reply" is `versions` configurations drawn uniformly from those not built
// yet; the SourceRanker (fitted to everything built so far) picks the one to
// build, the others are dropped. versions 1 is uniform sampling. Counted:
// builds to come within the target, and to the best.
const Figures& RankedFiguresFor(const std::string& task, int versions) {
  static std::map<std::pair<std::string, int>, Figures> cache;
  const auto key = std::make_pair(task, versions);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const Space& space = Spaces().at(task);
  struct Config {
    std::string source;
    Entry entry;
  };
  std::vector<Config> all;
  for (const SourceFile& seed : space.task.seeds) {
    for (const auto& [values, entry] : space.configs.at(seed.name)) {
      KnobValues knobs;
      std::istringstream words(values);
      for (std::string word; words >> word;) knobs[word.substr(0, word.find('='))] = word.substr(word.find('=') + 1);
      all.push_back({SubstituteKnobs(seed.text, knobs), entry});
    }
  }
  const double threshold = GetOptions().target * space.best;
  Figures figures;
  for (int seed = 1; seed <= GetOptions().seeds; ++seed) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
    std::vector<std::size_t> unbuilt(all.size());
    std::iota(unbuilt.begin(), unbuilt.end(), 0);
    SourceRanker ranker;
    std::optional<int> near, best;
    for (int built = 1; !unbuilt.empty() && !best; ++built) {
      std::shuffle(unbuilt.begin(), unbuilt.end(), rng);
      const std::size_t drawn = std::min<std::size_t>(static_cast<std::size_t>(versions), unbuilt.size());
      std::size_t chosen = 0;  // the reply's first
      if (drawn > 1) {
        std::vector<std::string_view> sources;
        for (std::size_t i = 0; i < drawn; ++i) sources.emplace_back(all[unbuilt[i]].source);
        if (auto predicted = ranker.Predict(sources)) {
          chosen = static_cast<std::size_t>(std::max_element(predicted->begin(), predicted->end()) - predicted->begin());
        }
      }
      const Config& config = all[unbuilt[chosen]];
      unbuilt.erase(unbuilt.begin() + static_cast<std::ptrdiff_t>(chosen));
      const bool measured = config.entry.outcome == Outcome::kMeasured;
      ranker.Observe(static_cast<NodeId>(built), config.source,
                     measured ? std::optional<double>(config.entry.speedup) : std::nullopt);
      if (measured && !near && config.entry.speedup >= threshold) near = built;
      if (measured && config.entry.speedup >= space.best) best = built;
    }
    figures.near.Add(near, space.size);
    figures.best.Add(best, space.size);
  }
  return cache.emplace(key, std::move(figures)).first->second;
}

void BM_RankedVersions(benchmark::State& state, const std::string& task, int versions) {
  for (auto _ : state) benchmark::DoNotOptimize(RankedFiguresFor(task, versions).near.evaluations.data());
  const Figures& figures = RankedFiguresFor(task, versions);
  state.counters["median_builds"] = figures.near.Median();
  state.counters["reached"] = figures.near.reached;
  state.counters["best_median_builds"] = figures.best.Median();
  state.counters["best_max_builds"] = figures.best.Max();
}

// The cost of one selection on a large graph: a random tree of N nodes, half
// of them measured; each iteration selects a parent and adds a measured child
// of it, as a run does between two selections.
// With `save`, each iteration also saves the state as the engine does with
// every result: "whole" SaveState() (what the engine saved before the
// strategy's journal), "journal" SaveState(kWithoutJournal) and the journal's
// new entries; saved_bytes: their mean size.
void BM_Select(benchmark::State& state, const std::string& strategy_name, const std::string& save = "") {
  const auto count = static_cast<NodeId>(state.range(0));
  std::mt19937_64 random(42);
  std::uniform_real_distribution<double> speedup(0.5, 4.0);
  SearchGraph graph;
  for (NodeId id = 1; id <= count; ++id) {
    GraphNode node;
    node.id = id;
    node.identity = std::to_string(id);
    if (random() % 2 == 0) {
      node.status = NodeStatus::kMeasured;
      node.speedup = speedup(random);
    } else {
      node.status = NodeStatus::kWrong;
    }
    graph.AddNode(node);
    if (id > 1) graph.AddDerivation(static_cast<NodeId>(1 + random() % static_cast<std::uint64_t>(id - 1)), id, EdgeKind::kDerive);
  }
  StrategyConfig config;
  config.name = strategy_name;
  auto strategy = std::move(*MakeStrategy(config));
  // The first selection builds the strategy's caches (subtree bests, island
  // homes), once per run or resume; it is reported apart.
  const auto started = std::chrono::steady_clock::now();
  benchmark::DoNotOptimize(strategy->Select(graph, random));
  state.counters["first_select_ms"] =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  NodeId next = count + 1;
  strategy->JournalStored();  // the homes the first selection dealt: stored as the graph was
  double saved_bytes = 0;
  for (auto _ : state) {
    const auto parent = strategy->Select(graph, random);
    if (!parent) break;
    if (next % 7 == 0) strategy->MarkExhausted(*parent);
    if (save == "whole") {
      saved_bytes += static_cast<double>(strategy->SaveState().dump().size());
    } else if (save == "journal") {
      saved_bytes += static_cast<double>(strategy->SaveState(Strategy::StateParts::kWithoutJournal).dump().size() +
                                         strategy->PendingJournal().dump().size());
      strategy->JournalStored();
    }
    graph.NoteExpansion(*parent);
    GraphNode child;
    child.id = next;
    child.identity = std::to_string(next);
    child.status = NodeStatus::kMeasured;
    child.speedup = speedup(random);
    graph.AddNode(child);
    graph.AddDerivation(*parent, next++, EdgeKind::kDerive);
  }
  state.SetItemsProcessed(state.iterations());
  if (!save.empty()) state.counters["saved_bytes"] = saved_bytes / static_cast<double>(state.iterations());
}

// What a resume spends on the strategy's journal of a run of N nodes,
// compacted (one snapshot row: every home, some exhausted nodes and guests):
// parsing the row's text and replaying it on a fresh strategy.
void BM_ReplaySnapshot(benchmark::State& state, const std::string& strategy_name) {
  const auto count = static_cast<NodeId>(state.range(0));
  std::mt19937_64 random(7);
  SearchGraph graph;
  for (NodeId id = 1; id <= count; ++id) {
    GraphNode node;
    node.id = id;
    node.identity = std::to_string(id);
    node.status = NodeStatus::kMeasured;
    node.speedup = 1.0 + static_cast<double>(random() % 1000) / 1000.0;
    graph.AddNode(node);
    if (id > 1) graph.AddDerivation(static_cast<NodeId>(1 + random() % static_cast<std::uint64_t>(id - 1)), id, EdgeKind::kDerive);
  }
  StrategyConfig config;
  config.name = strategy_name;
  auto original = std::move(*MakeStrategy(config));
  original->Select(graph, random);  // homes every node
  for (NodeId id = 1; id <= count; id += 7) original->MarkExhausted(id);
  const std::string row = original->JournalSnapshot().dump();
  for (auto _ : state) {
    auto fresh = std::move(*MakeStrategy(config));
    auto replayed = fresh->Replay(nlohmann::json::parse(row));
    if (!replayed) state.SkipWithError(replayed.error().message().c_str());
    benchmark::DoNotOptimize(fresh);
  }
  state.counters["row_mb"] = static_cast<double>(row.size()) / 1e6;
}

std::string Number(double value) {
  return value == static_cast<double>(static_cast<long>(value)) ? fmt::format("{:.0f}", value)
                                                                  : fmt::format("{:.1f}", value);
}

// One table: evaluations to `goal` per space and strategy, against uniform
// sampling without replacement (expected draws to hit one of `hits` of N:
// (N + 1) / (hits + 1)).
void PrintGoalTable(const std::string& title, Goal Figures::*goal, bool to_best) {
  const Options& options = GetOptions();
  std::cout << "\n" << title << " (median over " << options.seeds
            << " seeds; in brackets, the ratio to uniform draws; the slowest run; runs that never got there). "
               "Uniform draws: the expected evaluations of sampling without replacement, (N + 1) / (hits + 1); after "
               "the seed: the same for a sampler that, like every strategy here, evaluates the seed's default "
               "configuration first:\n\n";
  std::cout << "| space | configs | best | hits | uniform draws | after the seed |";
  for (const auto& strategy : Strategies()) std::cout << " " << strategy << " |";
  std::cout << "\n| --- | ---: | ---: | ---: | ---: | ---: |";
  for (std::size_t i = 0; i < Strategies().size(); ++i) std::cout << " ---: |";
  std::cout << "\n";
  for (const auto& [name, space] : Spaces()) {
    const std::size_t hits = to_best ? 1 : space.near;
    const double uniform = space.UniformDraws(hits);
    const double after_seed = space.UniformAfterSeeds(hits, to_best ? space.best : options.target * space.best);
    std::cout << fmt::format("| {} | {} | {:.2f}x | {} | {:.1f} | {:.1f} |", name, space.size, space.best, hits,
                             uniform, after_seed);
    for (const auto& strategy : Strategies()) {
      const Goal& figures = FiguresFor(name, strategy).*goal;
      std::cout << fmt::format(" {} ({:.2f}x; max {}){} |", Number(figures.Median()), figures.Median() / uniform,
                               figures.Max(),
                               figures.reached < options.seeds
                                   ? fmt::format("; {} never", options.seeds - figures.reached)
                                   : "");
    }
    std::cout << "\n";
  }
}

void PrintTable() {
  const Options& options = GetOptions();
  PrintGoalTable(fmt::format("Evaluations to come within {:.0f}% of the best configuration", 100 * (1 - options.target)),
                 &Figures::near, false);
  PrintGoalTable("Evaluations to the best configuration", &Figures::best, true);
  // The goals for the default strategy, on the spaces of 500 or more.
  const std::string default_strategy = StrategyConfig{}.name;
  int wins = 0, wins_after_seed = 0;
  for (const auto& [name, space] : Spaces()) {
    const double median = FiguresFor(name, default_strategy).near.Median();
    wins += median <= space.UniformDraws(space.near);
    wins_after_seed += median <= space.UniformAfterSeeds(space.near, options.target * space.best);
  }
  std::cout << fmt::format("\nThe default strategy ({}) needs at most uniform sampling's evaluations to come within "
                           "{:.0f}% on {} of {} spaces ({} of {} against uniform sampling after the seed).\n",
                           default_strategy, 100 * (1 - options.target), wins, Spaces().size(), wins_after_seed,
                           Spaces().size());
  for (const auto& [name, space] : Spaces()) {
    if (space.size < 500) continue;
    const Figures& figures = FiguresFor(name, default_strategy);
    const double near_uniform = space.UniformDraws(space.near);
    const double best_uniform = space.UniformDraws(1);
    std::cout << fmt::format(
        "{}: within {:.0f}% in {} (goal: at most half of {:.1f}: {}); the best in {}, at most {} (goal: every run "
        "within a fifth of {:.1f}: {})\n",
        name, 100 * (1 - options.target), Number(figures.near.Median()), near_uniform,
        figures.near.Median() <= near_uniform / 2 ? "met" : "not met", Number(figures.best.Median()),
        figures.best.Max(), best_uniform,
        figures.best.reached == options.seeds && figures.best.Max() <= best_uniform / 5 ? "met" : "not met");
  }
}

int Main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  Options& options = GetOptions();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--seeds=", 0) == 0) {
      options.seeds = std::max(1, std::atoi(arg.c_str() + 8));
    } else if (arg.rfind("--data=", 0) == 0) {
      options.data = arg.substr(7);
    } else if (arg == "--runs") {
      options.runs = true;
    } else if (arg.rfind("--target=", 0) == 0) {
      options.target = std::atof(arg.c_str() + 9);
    } else {
      std::cerr << "strategy_bench: unknown flag " << arg << " (--seeds=N, --data=DIR, --target=F, --runs)\n";
      return 2;
    }
  }
  std::error_code error;
  for (const auto& file : fs::directory_iterator(options.data, error)) {
    if (file.path().extension() != ".json") continue;
    auto space = LoadSpace(file.path(), options.target);
    if (!space) {
      std::cerr << "strategy_bench: skipped: " << space.error().message() << "\n";
      continue;
    }
    Spaces().emplace(file.path().stem().string(), std::move(*space));
  }
  if (Spaces().empty()) {
    std::cerr << "strategy_bench: no replay tables in " << options.data.string()
              << " (scripts/measure_knob_space writes them)\n";
    return 1;
  }
  // random first: every other benchmark's ratio needs its figures, and so
  // its time is its own.
  std::vector<std::string> order = {"random"};
  for (const auto& strategy : Strategies()) {
    if (strategy != "random") order.push_back(strategy);
  }
  for (const auto& [task, space] : Spaces()) {
    for (const auto& strategy : order) {
      benchmark::RegisterBenchmark(("BM_Efficiency/" + task + "/" + strategy).c_str(),
                                   [task, strategy](benchmark::State& state) { BM_Efficiency(state, task, strategy); })
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond);
    }
  }
  for (const auto& [task, space] : Spaces()) {
    if (space.size < 500) continue;
    for (int versions : {1, 4, 8}) {
      benchmark::RegisterBenchmark(("BM_RankedVersions/" + task + "/" + std::to_string(versions)).c_str(),
                                   [task, versions](benchmark::State& state) { BM_RankedVersions(state, task, versions); })
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond);
    }
  }
  for (const auto& strategy : Strategies()) {
    auto* select = benchmark::RegisterBenchmark(("BM_Select/" + strategy).c_str(),
                                                [strategy](benchmark::State& state) { BM_Select(state, strategy); });
    // Every strategy keeps its choice incrementally: at 1e3, 1e5 and 1e6
    // nodes, to show the cost does not grow with the graph.
    select->Arg(1000)->Arg(100000)->Arg(1000000);
    select->Unit(benchmark::kMicrosecond);
  }
  for (const std::string strategy : {"islands", "model"}) {
    benchmark::RegisterBenchmark(("BM_ReplaySnapshot/" + strategy).c_str(),
                                 [strategy](benchmark::State& state) { BM_ReplaySnapshot(state, strategy); })
        ->Arg(1000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);
  }
  // What saving the state with every result costs, whole or with its journal.
  for (const std::string strategy : {"islands", "model"}) {
    for (const std::string save : {"whole", "journal"}) {
      auto* saving = benchmark::RegisterBenchmark(
          ("BM_SelectAndSave/" + strategy + "/" + save).c_str(),
          [strategy, save](benchmark::State& state) { BM_Select(state, strategy, save); });
      saving->Arg(1000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMicrosecond);
      if (save == "whole") saving->Iterations(50);  // milliseconds each at 1e6 nodes
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (!GetOptions().runs) PrintTable();
  return 0;
}

}  // namespace
}  // namespace kestrel

int main(int argc, char** argv) { return kestrel::Main(argc, argv); }
