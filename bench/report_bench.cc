// What `kestrel report` costs as a graph grows: a synthetic graph of N nodes
// (a tree, each node with its own source of ~40 lines and one measurement of
// 2 shapes x 20 samples) on a real SQLite file; the time to read the model
// (LoadReport), to write the page (ReportHtml, Graphviz included up to its
// node limit), and the page's size. Not a Google Benchmark: one pass per
// size; it prints a markdown section for docs/BENCHMARKS.md.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "report/report_model.h"
#include "report/report_page.h"
#include "store/store.h"
#include "tests/testing.h"

namespace kestrel {
namespace {

template <class T>
T OrDie(Result<T> result) {
  if (!result) {
    std::fprintf(stderr, "report_bench: %s\n", result.error().message().c_str());
    std::exit(1);
  }
  return std::move(*result);
}

Measurement Measured(double speedup) {
  Measurement m;
  m.outcome = Outcome::kMeasured;
  for (int s = 0; s < 2; ++s) {
    ShapeTiming timing;
    timing.shape = {{"n", 1 << (16 + s)}};
    for (int i = 0; i < 20; ++i) {
      timing.candidate_seconds.push_back(1e-5 * (1.0 + 0.01 * i) / speedup);
      timing.reference_seconds.push_back(1e-5 * (1.0 + 0.01 * i));
    }
    timing.candidate = Summarize(timing.candidate_seconds);
    timing.reference = Summarize(timing.reference_seconds);
    timing.speedup = timing.reference.median / timing.candidate.median;
    timing.gflops = 2.0 * speedup;
    timing.gbps = 8.0 * speedup;
    m.shapes.push_back(std::move(timing));
  }
  m.speedup = GeomeanSpeedup(m.shapes);
  return m;
}

std::string Source(int i) {
  std::string text = "#include <cstdint>\n// variant " + std::to_string(i) + "\nvoid axpy(const float* x, float* y, int64_t n) {\n";
  for (int line = 0; line < 36; ++line) {
    text += "  for (int64_t i = " + std::to_string((i * 7 + line) % 13) + "; i < n; ++i) y[i] = 2.0f * x[i] + 1.0f;\n";
  }
  return text + "}\n";
}

void Measure(int nodes) {
  testing::TempDir dir;
  auto store = OrDie(Store::Open(dir / "bench.db"));
  Task task;
  task.name = "bench";
  task.spec_text = R"({"name": "bench"})";
  const auto task_id = OrDie(store->UpsertTask(task));
  const auto graph = OrDie(store->GraphForTask(task_id, false));
  HostInfo host;
  host.name = "bench-host";
  const auto host_id = OrDie(store->UpsertHost(host));
  RunRecord run;
  run.task_id = task_id;
  run.graph_id = graph;
  run.host_id = host_id;
  run.config_json = R"({"budget": {"evaluations": 100000}})";
  const auto run_id = OrDie(store->CreateRun(run));
  std::vector<std::int64_t> ids;
  for (int i = 0; i < nodes; ++i) {
    NodeRecord node = NewNodeRecord({Source(i), {{"U", std::to_string(i % 8)}}, "c++", {"-O3"}}, graph, run_id,
                                    i == 0 ? "seed:seed.cpp" : "knob U");
    std::optional<EdgeRecord> edge;
    if (i > 0) edge = EdgeRecord{ids[static_cast<std::size_t>((i - 1) / 3)], 0, EdgeKind::kDerive, run_id, "knob U", 0};
    ids.push_back(OrDie(store->AddNode(node, edge)));
    OrDie(store->RecordMeasurement(ids.back(), run_id, host_id, Measured(1.0 + (i * 7919 % 1000) / 100.0)));
  }
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto model = OrDie(LoadReport(*store, {}));
  const auto loaded = Clock::now();
  const std::string html = report::ReportHtml(model);
  const auto written = Clock::now();
  const auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::printf("| %d | %.0f ms | %.0f ms | %.1f MB |\n", nodes, ms(start, loaded), ms(loaded, written),
              static_cast<double>(html.size()) / 1e6);
}

}  // namespace
}  // namespace kestrel

int main() {
  std::printf("## What a report costs (`bench/report_bench`)\n\n");
  std::printf("| nodes | read the model | write the page (with Graphviz up to 1500 nodes) | page |\n| ---: | ---: | ---: | ---: |\n");
  for (int nodes : {100, 1000, 3000}) kestrel::Measure(nodes);
  return 0;
}
