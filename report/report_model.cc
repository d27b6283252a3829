#include "report/report_model.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "store/store.h"

namespace kestrel {
namespace {

// The run the scope names: the given one, else the newest (of the task).
Result<RunRecord> ScopeRun(Store& store, const ReportScope& scope) {
  if (scope.run_id) {
    auto run = store.GetRun(*scope.run_id);
    if (!run && run.error().IsNotFound()) {
      return Fail(Error::InvalidArgument("--run " + std::to_string(*scope.run_id) + ": no such run in the database"));
    }
    if (run && scope.task && run->task_name != *scope.task) {
      return Fail(Error::InvalidArgument("--run " + std::to_string(*scope.run_id) + " is a run of task " +
                                         run->task_name + ", not of " + *scope.task));
    }
    return run;
  }
  auto runs = store.ListRuns();
  if (!runs) return Fail(runs.error());
  for (const RunRecord& run : *runs) {
    if (!scope.task || run.task_name == *scope.task) return run;
  }
  if (scope.task) return Fail(Error::InvalidArgument("--task " + *scope.task + ": no run of this task in the database"));
  return Fail(Error::InvalidArgument("the database has no runs yet (start one with `kestrel run`)"));
}

// Seconds the run was active: each session from its "start" to its "stop"
// (a killed session to its last event; a running one to now).
double ActiveSeconds(const RunRecord& run, const std::vector<RunEventRecord>& events, std::int64_t now) {
  constexpr std::int64_t kClosed = -1;
  double total = 0.0;
  std::int64_t open = kClosed;  // when the current session started
  std::int64_t last = run.started_at;
  for (const RunEventRecord& event : events) {
    if (event.kind == "start") {
      if (open != kClosed) total += static_cast<double>(last - open) / 1000.0;
      open = event.at;
    } else if (event.kind == "stop" && open != kClosed) {
      total += static_cast<double>(event.at - open) / 1000.0;
      open = kClosed;
    }
    last = event.at;
  }
  if (open != kClosed) total += static_cast<double>((run.status == RunStatus::kRunning ? now : last) - open) / 1000.0;
  return total;
}

int ThreadsOf(const RunRecord& run) {
  const auto config = nlohmann::json::parse(run.config_json, nullptr, false);
  if (config.is_object() && config.contains("evaluator") && config["evaluator"].is_object()) {
    const auto& threads = config["evaluator"].value("threads", nlohmann::json(1));
    if (threads.is_number_integer()) return threads.get<int>();
  }
  return 1;
}

Result<RunView> LoadRunView(Store& store, RunRecord run, const std::vector<HostRecord>& hosts, std::int64_t now) {
  RunView view;
  auto events = store.RunEvents(run.id);
  if (!events) return Fail(events.error());
  view.active_seconds = ActiveSeconds(run, *events, now);
  if (view.active_seconds > 0) {
    view.evaluations_per_hour = static_cast<double>(run.evaluations) * 3600.0 / view.active_seconds;
  }
  for (const HostRecord& host : hosts) {
    if (host.id == run.host_id) view.host = host;
  }
  if (view.host) {
    auto calibration = store.LatestCalibration(run.host_id, ThreadsOf(run));
    if (!calibration) return Fail(calibration.error());
    view.calibration = *calibration;
  }
  view.run = std::move(run);
  return view;
}

Status LoadProgress(Store& store, const RunRecord& scope_run, bool one_run, ReportModel& model) {
  auto measurements = store.GraphMeasurements(model.graph_id, one_run ? scope_run.id : 0);
  if (!measurements) return Fail(measurements.error());
  auto confirmations = store.GraphConfirmations(model.graph_id, one_run ? scope_run.id : 0);
  if (!confirmations) return Fail(confirmations.error());
  std::int64_t evaluation = 0;
  for (const MeasurementBrief& brief : *measurements) {
    if (brief.purpose != "search") continue;  // re-measurements and same-code copies are no evaluations
    const double speedup = brief.outcome == Outcome::kMeasured ? brief.speedup : 0.0;
    model.progress.push_back({brief.created_at, ++evaluation, brief.node_id, brief.outcome, speedup});
  }
  for (const ConfirmationBrief& brief : *confirmations) {
    if (brief.verdict == ConfirmationVerdict::kUnstable) continue;
    // The evaluation count at the time of the round places it on the x axis.
    const auto after = std::upper_bound(model.progress.begin(), model.progress.end(), brief.created_at,
                                        [](std::int64_t at, const ProgressPoint& point) { return at < point.at; });
    model.confirmed.push_back({brief.created_at, static_cast<std::int64_t>(after - model.progress.begin()),
                               brief.node_id, brief.node_median, brief.verdict});
  }
  return {};
}

// Geometric means over the latest measured result's shapes.
std::optional<RooflinePoint> RooflineOf(const NodePage& page) {
  for (auto it = page.measurements.rbegin(); it != page.measurements.rend(); ++it) {
    const Measurement& m = it->measurement;
    if (m.outcome != Outcome::kMeasured || m.shapes.empty()) continue;
    double log_gflops = 0.0, log_intensity = 0.0;
    for (const ShapeTiming& shape : m.shapes) {
      if (shape.gflops <= 0 || shape.gbps <= 0) return std::nullopt;
      log_gflops += std::log(shape.gflops);
      log_intensity += std::log(shape.gflops / shape.gbps);
    }
    const double n = static_cast<double>(m.shapes.size());
    return RooflinePoint{page.node.id, std::exp(log_intensity / n), std::exp(log_gflops / n), m.speedup};
  }
  return std::nullopt;
}

// The review thresholds of the newest run's config (the run was refused at
// its start had they been bad; search/run_config.h validates them), or the
// defaults.
ReviewThresholds NewestReviewThresholds(const std::vector<RunView>& runs) {
  ReviewThresholds thresholds;
  if (runs.empty()) return thresholds;
  const auto config = nlohmann::json::parse(runs.back().run.config_json, nullptr, false);
  if (!config.is_object() || !config.contains("review") || !config["review"].is_object()) return thresholds;
  const auto& review = config["review"];
  if (review.contains("speedup") && review["speedup"].is_number()) thresholds.speedup = review["speedup"].get<double>();
  if (review.contains("roofline") && review["roofline"].is_number()) thresholds.roofline = review["roofline"].get<double>();
  return thresholds;
}

Result<NodePage> LoadNodePage(Store& store, std::int64_t node_id, const std::vector<EdgeRecord>& edges) {
  NodePage page;
  auto node = store.GetNode(node_id);
  if (!node) return Fail(node.error());
  page.node = std::move(*node);
  for (const EdgeRecord& edge : edges) {
    if (edge.child == node_id && MadeChild(edge.kind)) {
      page.made_by = edge;
      break;
    }
  }
  if (page.made_by) {
    auto parent = store.GetNode(page.made_by->parent);
    if (!parent) return Fail(parent.error());
    page.parent_source = std::move(parent->source);
  }
  auto measurements = store.GetMeasurements(node_id);
  if (!measurements) return Fail(measurements.error());
  page.measurements = std::move(*measurements);
  for (const MeasurementRecord& record : page.measurements) {
    page.eval_seconds += record.measurement.build_seconds + record.measurement.eval_seconds;
  }
  auto actions = store.NodeActions(node_id);
  if (!actions) return Fail(actions.error());
  page.actions = std::move(*actions);
  auto profile = store.LatestProfile(node_id, 0);
  if (!profile) return Fail(profile.error());
  page.profile = std::move(*profile);
  auto calls = store.LlmCallsForNode(node_id);
  if (!calls) return Fail(calls.error());
  page.llm_calls = std::move(*calls);
  for (const LlmCallRecord& call : page.llm_calls) page.llm_usd += call.cost_usd;
  return page;
}

}  // namespace

Result<ReportModel> LoadReport(Store& store, const ReportScope& scope, int top) {
  ReportModel model;
  model.generated_at = NowMillis();
  auto scope_run = ScopeRun(store, scope);
  if (!scope_run) return Fail(scope_run.error());
  model.task_name = scope_run->task_name;
  model.graph_id = scope_run->graph_id;

  auto hosts = store.ListHosts();
  if (!hosts) return Fail(hosts.error());
  std::vector<RunRecord> runs;
  if (scope.run_id) {
    runs.push_back(*scope_run);
  } else {
    auto all = store.ListRuns();
    if (!all) return Fail(all.error());
    for (const RunRecord& run : *all) {
      if (run.graph_id == model.graph_id) runs.push_back(run);
    }
    std::reverse(runs.begin(), runs.end());  // oldest first
  }
  for (RunRecord& run : runs) {
    auto view = LoadRunView(store, std::move(run), *hosts, model.generated_at);
    if (!view) return Fail(view.error());
    model.runs.push_back(std::move(*view));
  }
  if (!model.runs.empty()) model.ceilings = model.runs.back().calibration;

  if (auto loaded = LoadProgress(store, *scope_run, scope.run_id.has_value(), model); !loaded) {
    return Fail(loaded.error());
  }
  auto nodes = store.LoadNodes(model.graph_id);
  if (!nodes) return Fail(nodes.error());
  model.nodes = std::move(*nodes);
  auto edges = store.LoadEdges(model.graph_id);
  if (!edges) return Fail(edges.error());
  model.edges = std::move(*edges);

  // The task's best rows of this graph only (a --fresh run starts another graph of the same task).
  BestQuery query;
  query.task = model.task_name;
  if (scope.run_id) query.run_id = scope.run_id;
  query.top = 0;
  auto best = store.Best(query);
  if (!best) return Fail(best.error());
  std::set<std::int64_t> in_graph;
  for (const NodeRecord& node : model.nodes) in_graph.insert(node.id);
  for (BestRow& row : *best) {
    if (static_cast<int>(model.top.size()) >= top) break;
    if (in_graph.count(row.node_id) != 0) model.top.push_back(std::move(row));
  }

  auto awaiting = store.ReviewQueue(model.graph_id, NewestReviewThresholds(model.runs));
  if (!awaiting) return Fail(awaiting.error());
  model.awaiting_review = std::move(*awaiting);

  for (const NodeRecord& node : model.nodes) {
    auto page = LoadNodePage(store, node.id, model.edges);
    if (!page) return Fail(page.error());
    if (auto point = RooflineOf(*page)) model.roofline.push_back(*point);
    model.pages.push_back(std::move(*page));
  }
  return model;
}

}  // namespace kestrel
