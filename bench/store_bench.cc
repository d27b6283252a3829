// Store benchmarks on a real SQLite file in a temporary directory (WAL,
// synchronous=NORMAL, as Kestrel runs it).
//   BM_RecordNodeWithMeasurement: one AddNode + one RecordMeasurement of 2
//     shapes x 20 raw samples each (two write transactions), per iteration.
//   BM_BestQuery/N: Best(top 10) over N measured nodes.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "store/store.h"
#include "tests/testing.h"

namespace kestrel {
namespace {

template <class T>
T OrDie(Result<T> result) {
  if (!result) {
    std::fprintf(stderr, "store_bench: %s\n", result.error().message().c_str());
    std::abort();
  }
  return std::move(*result);
}

struct Fixture {
  testing::TempDir dir;
  std::unique_ptr<Store> store;
  std::int64_t graph = 0, run = 0, host = 0;

  Fixture() {
    store = OrDie(Store::Open(dir / "bench.db"));
    Task task;
    task.name = "bench";
    task.spec_text = R"({"name": "bench"})";
    const auto task_id = OrDie(store->UpsertTask(task));
    graph = OrDie(store->GraphForTask(task_id, false));
    HostInfo info;
    info.name = "bench-host";
    info.cpu_model = "cpu";
    host = OrDie(store->UpsertHost(info));
    RunRecord record;
    record.task_id = task_id;
    record.graph_id = graph;
    record.host_id = host;
    record.config_json = "{}";
    run = OrDie(store->CreateRun(record));
  }

  NodeRecord Node(std::int64_t i) const {
    NodeRecord node;
    node.graph_id = graph;
    node.run_id = run;
    // Sources shared by groups of knob variants, as in a real search.
    node.source = "// kestrel:knob B 1 2 4 8\nvoid kernel(const float* x, float* y, long n) { /* " +
                  std::to_string(i / 16) + " */ }\n";
    node.knobs = {{"B", std::to_string(i % 16)}, {"U", std::to_string(i)}};
    node.toolchain = "g++ (Debian 12.2.0-14) 12.2.0";
    node.flags = {"-O3", "-march=native"};
    node.mutation = "knob U " + std::to_string(i);
    node.identity = node.ToCandidate().Identity();
    return node;
  }
};

Measurement MakeMeasurement(double speedup, int shapes, int samples) {
  Measurement m;
  m.outcome = Outcome::kMeasured;
  m.reason = "measured";
  for (int s = 0; s < shapes; ++s) {
    ShapeTiming timing;
    timing.shape = {{"rows", 1024 << s}, {"cols", 4096}};
    for (int i = 0; i < samples; ++i) {
      timing.candidate_seconds.push_back(1.2345e-5 * (1.0 + 0.01 * i) / speedup);
      timing.reference_seconds.push_back(1.2345e-5 * (1.0 + 0.013 * i));
    }
    timing.candidate = Summarize(timing.candidate_seconds);
    timing.reference = Summarize(timing.reference_seconds);
    timing.speedup = timing.reference.median / timing.candidate.median;
    m.shapes.push_back(std::move(timing));
  }
  m.speedup = GeomeanSpeedup(m.shapes);
  m.input_sets = 3;
  m.seed = 12345;
  return m;
}

void BM_RecordNodeWithMeasurement(benchmark::State& state) {
  Fixture fixture;
  const Measurement measurement = MakeMeasurement(1.5, 2, 20);
  std::int64_t i = 0;
  for (auto _ : state) {
    const auto node = OrDie(fixture.store->AddNode(fixture.Node(i++), std::nullopt));
    benchmark::DoNotOptimize(OrDie(fixture.store->RecordMeasurement(node, fixture.run, fixture.host, measurement)));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RecordNodeWithMeasurement)->Unit(benchmark::kMicrosecond);

void BM_BestQuery(benchmark::State& state) {
  Fixture fixture;
  const std::int64_t nodes = state.range(0);
  for (std::int64_t i = 0; i < nodes; ++i) {
    const auto node = OrDie(fixture.store->AddNode(fixture.Node(i), std::nullopt));
    const double speedup = 0.5 + static_cast<double>((i * 7919) % 1000) / 250.0;
    OrDie(fixture.store->RecordMeasurement(node, fixture.run, fixture.host, MakeMeasurement(speedup, 1, 5)));
  }
  const BestQuery query{std::string("bench"), std::nullopt, std::nullopt, 10};
  for (auto _ : state) {
    auto rows = OrDie(fixture.store->Best(query));
    if (rows.size() != 10) state.SkipWithError("Best returned the wrong number of rows");
    benchmark::DoNotOptimize(rows);
  }
}
BENCHMARK(BM_BestQuery)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kestrel

BENCHMARK_MAIN();
