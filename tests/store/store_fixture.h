#pragma once
// Builders of plain records for the store tests, and a raw SQLite peek at the
// file (for what the Store API does not expose, such as row counts).

#include <doctest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>

#include "core/host.h"
#include "core/measurement.h"
#include "core/task.h"
#include "store/records.h"
#include "tests/sqlite_peek.h"

namespace kestrel::testing {

// The value of `result`; a failed result fails the test with its message.
template <class T>
T Must(Result<T> result) {
  if (!result) FAIL(result.error().message());
  return std::move(*result);
}
inline void Must(const Status& status) {
  if (!status) FAIL(status.error().message());
}

inline Task MakeTask(const std::string& name) {
  Task task;
  task.name = name;
  task.spec_text = R"({"name": ")" + name + R"(", "entry": "f"})";
  return task;
}

inline HostInfo MakeHost(const std::string& name) {
  return {name, "Test CPU @ 3GHz", 8, "avx2 fma", 48 * 1024, 2 << 20, 32 << 20, std::int64_t{16} << 30,
          "Linux 6.1.0 x86_64"};
}

// A node of `graph` whose candidate is `source` with KNOB=`knob`.
inline NodeRecord MakeNode(std::int64_t graph, std::int64_t run, const std::string& source, const std::string& knob) {
  NodeRecord node;
  node.graph_id = graph;
  node.run_id = run;
  node.source = source;
  node.knobs = {{"KNOB", knob}, {"OTHER", "1"}};
  node.toolchain = "g++ 12.2.0";
  node.flags = {"-O3", "-march=native"};
  node.mutation = "knob KNOB ->" + knob;
  node.identity = node.ToCandidate().Identity();
  return node;
}

// `shapes` timed shapes of `samples` raw samples each, at `speedup`.
inline Measurement MakeMeasured(double speedup, int shapes = 2, int samples = 20) {
  Measurement m;
  m.outcome = Outcome::kMeasured;
  m.reason = "measured";
  m.log = "ok";
  for (int s = 0; s < shapes; ++s) {
    ShapeTiming timing;
    timing.shape = {{"rows", 64 << s}, {"cols", 1000 + s}};
    for (int i = 0; i < samples; ++i) {
      timing.candidate_seconds.push_back(1e-5 * (1.0 + 0.013 * i) / speedup);
      timing.reference_seconds.push_back(1e-5 * (1.0 + 0.007 * i + 0.1 / 3.0));
    }
    timing.candidate = Summarize(timing.candidate_seconds);
    timing.reference = Summarize(timing.reference_seconds);
    timing.speedup = timing.reference.median / timing.candidate.median;
    timing.gflops = 1.5 * s;
    timing.gbps = 12.25;
    m.shapes.push_back(timing);
  }
  m.speedup = speedup;
  m.build_seconds = 0.75;
  m.eval_seconds = 1.5;
  m.input_sets = 3;
  m.seed = 0xFEDCBA9876543210ULL;  // above INT64_MAX: must survive the signed column
  return m;
}

inline Measurement MakeWrong() {
  Measurement m;
  m.outcome = Outcome::kWrong;
  m.reason = "1 of 3 input sets differ";
  m.log = "y[7]: expected 1 got 2";
  m.mismatches = {{0, 1, "y", 7, 1.0, 2.0}, {1, 2, "y", 9, -0.5, 0.25}};
  m.input_sets = 3;
  m.seed = 42;
  return m;
}

}  // namespace kestrel::testing
