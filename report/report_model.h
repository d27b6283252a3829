#pragma once
// ReportModel: what `kestrel report` and `kestrel serve` show of one search
// graph, read from the Store and nothing else (no evaluator, no engine). Plain
// data; the HTML writer (report_page.h) turns it into a page.
//
// Scope: `--run ID` shows that run (its graph, its measurements); `--task T`
// the graph of T's newest run with every run of that graph; neither, the
// newest run's graph. Rows a person adds later (notes, labels, "awaiting
// review") belong in NodePage and TopRow, one field each.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/roofline.h"
#include "store/human_records.h"
#include "store/records.h"

namespace kestrel {

class Store;

struct ReportScope {
  std::optional<std::string> task;
  std::optional<std::int64_t> run_id;
};

// One run of the graph, with what it used of its budgets.
struct RunView {
  RunRecord run;
  std::optional<HostRecord> host;
  std::optional<Calibration> calibration;  // of its host, at its thread count
  double active_seconds = 0.0;             // between its start and stop events (sessions summed)
  double evaluations_per_hour = 0.0;       // 0 when it was active for no time
};

// A search measurement, in the order they were taken: the progress charts.
struct ProgressPoint {
  std::int64_t at = 0;          // epoch ms
  std::int64_t evaluation = 0;  // 1-based, over the scope's search measurements
  std::int64_t node_id = 0;
  Outcome outcome = Outcome::kMeasured;
  double speedup = 0.0;  // 0 unless measured
};

// A node's median after a confirmation round: a confirmed result, drawn
// apart from single measurements.
struct ConfirmedPoint {
  std::int64_t at = 0;
  std::int64_t evaluation = 0;  // search measurements taken by then
  std::int64_t node_id = 0;
  double median = 0.0;
  ConfirmationVerdict verdict = ConfirmationVerdict::kFinal;
};

// A measured node on the roofline chart: its latest measured result's
// geometric-mean arithmetic intensity and throughput over the timed shapes.
struct RooflinePoint {
  std::int64_t node_id = 0;
  double flops_per_byte = 0.0;
  double gflops = 0.0;
  double speedup = 0.0;
};

// Everything about one node the report prints.
struct NodePage {
  NodeRecord node;  // with source
  // The edge it was made by (derive, fix, ...; none for a seed) and the
  // parent's source, for the diff.
  std::optional<EdgeRecord> made_by;
  std::string parent_source;
  std::vector<MeasurementRecord> measurements;
  std::optional<ProfileRecord> profile;
  std::vector<LlmCallRecord> llm_calls;  // the exchange that made it, and analyses of it
  double llm_usd = 0.0;
  double eval_seconds = 0.0;  // build + evaluation time over its measurements
  std::vector<HumanActionRecord> actions;  // what people did to it (notes, labels, bans, ...), oldest first
};

struct ReportModel {
  std::string task_name;
  std::int64_t graph_id = 0;
  std::int64_t generated_at = 0;  // epoch ms
  std::vector<RunView> runs;      // oldest first
  std::vector<ProgressPoint> progress;
  std::vector<ConfirmedPoint> confirmed;
  std::vector<RooflinePoint> roofline;
  std::optional<Calibration> ceilings;  // the newest run's host's, if calibrated
  std::vector<NodeRecord> nodes;        // the graph, without sources, in id order
  std::vector<EdgeRecord> edges;
  std::vector<BestRow> top;             // the top candidates (Store::Best over the scope)
  std::vector<NodePage> pages;          // one per node, in id order
  // Results past the newest run's review thresholds that no one has labelled yet.
  std::vector<ReviewItem> awaiting_review;
};

// Reads the model. An unknown run or task (or a database without runs) is
// InvalidArgument naming it; a read failure is returned as it came.
Result<ReportModel> LoadReport(Store& store, const ReportScope& scope, int top = 10);

}  // namespace kestrel
