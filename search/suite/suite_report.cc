#include "search/suite/suite_report.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "search/engine/budget.h"
#include "store/store.h"

namespace kestrel {
namespace {

// The interval a best row's speedup carries: the spread of the node's
// measured results when it has several (the confirmation rule's noise),
// else the widest (p90 - p10) / median of the candidate's timings in its
// one measurement.
Result<double> Noise(Store& store, const BestRow& row) {
  if (row.measurements >= 2) return row.spread;
  auto measurements = store.GetMeasurements(row.node_id);
  if (!measurements) return Fail(measurements.error());
  double widest = 0.0;
  for (const MeasurementRecord& record : *measurements) {
    if (record.id != row.measurement_id) continue;
    for (const ShapeTiming& shape : record.measurement.shapes) widest = std::max(widest, shape.candidate.spread);
  }
  return widest;
}

// Fills the run's part of `result`: its best correct kernel and its costs.
Status ReadRun(Store& store, SuiteTaskResult& result) {
  auto run = store.GetRun(result.run_id);
  if (!run) return Fail(run.error());
  result.evaluations = run->evaluations;
  result.llm_usd = run->llm_usd;
  auto events = store.RunEvents(run->id);
  if (!events) return Fail(events.error());
  result.active_seconds = SpentBy(*run, *events).seconds;
  // The baseline its sessions timed (the newest): a task without a correct
  // kernel still counts over the baseline, at the reference's standing.
  for (const RunEventRecord& event : *events) {
    if (event.kind != "baseline") continue;
    const nlohmann::json detail = nlohmann::json::parse(event.detail_json, nullptr, false);
    if (detail.is_object() && detail.contains("speedup") && detail.at("speedup").is_number()) {
      result.baseline_speedup = detail.at("speedup").get<double>();
    }
  }

  BestQuery query;
  query.run_id = run->id;
  query.top = 0;
  auto rows = store.Best(query);
  if (!rows) return Fail(rows.error());
  // The best row that counts: not unstable, and not one a person labelled
  // `reward_hack` or `wrong` (it was scored correct, a fast_2 win).
  auto best = rows->end();
  for (auto row = rows->begin(); row != rows->end(); ++row) {
    if (row->confirmation == ConfirmationVerdict::kUnstable) continue;
    auto label = store.NodeLabel(row->node_id);
    if (!label) return Fail(label.error());
    if (*label && ((*label)->text == "reward_hack" || (*label)->text == "wrong")) {
      ++result.labelled_out;
      continue;
    }
    best = row;
    break;
  }
  if (best != rows->end()) {
    result.correct = true;
    result.best_node = best->node_id;
    result.speedup = best->speedup;
    result.baseline_speedup = best->baseline_speedup;
    result.roofline_fraction = best->roofline_fraction;
    auto noise = Noise(store, *best);
    if (!noise) return Fail(noise.error());
    result.noise = *noise;
  }

  auto measured = store.GraphMeasurements(run->graph_id, run->id);
  if (!measured) return Fail(measured.error());
  for (const MeasurementBrief& brief : *measured) {
    if (brief.outcome == Outcome::kMeasured && brief.purpose == "search") {
      result.first_correct_s = static_cast<double>(brief.created_at - run->started_at) / 1000.0;
      break;
    }
  }
  return {};
}

nlohmann::json Optional(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

nlohmann::json FastJson(const std::array<double, kFastP.size()>& shares) {
  nlohmann::json fast = nlohmann::json::object();
  for (std::size_t i = 0; i < kFastP.size(); ++i) {
    fast[i == 2 ? "1.5" : std::to_string(static_cast<int>(kFastP[i]))] = shares[i];
  }
  return fast;
}

nlohmann::json ToJson(const SuiteSummary& summary, bool any_baseline) {
  // Without a task searched, a rate or a mean does not exist: null (SUITE.md), not 0.
  const bool any = summary.tasks > 0;
  const auto some = [any](const nlohmann::json& value) { return any ? value : nlohmann::json(); };
  return {{"level", summary.level},
          {"tasks", summary.tasks},
          {"skipped", summary.skipped},
          {"correct", summary.correct},
          {"pass_rate", some(any ? static_cast<double>(summary.correct) / summary.tasks : 0.0)},
          {"fast_p_reference", some(FastJson(summary.fast_reference))},
          {"with_baseline", summary.with_baseline},
          {"fast_p_baseline", any_baseline && summary.with_baseline > 0 ? FastJson(summary.fast_baseline) : nlohmann::json()},
          {"geomean_speedup", some(summary.geomean_reference)},
          {"geomean_over_baseline",
           any_baseline && summary.with_baseline > 0 ? nlohmann::json(summary.geomean_baseline) : nlohmann::json()},
          {"mean_roofline_fraction", Optional(summary.mean_roofline)},
          {"mean_gap_closed", Optional(summary.mean_gap_closed)},
          {"evaluations_per_hour", some(summary.evaluations_per_hour)},
          {"mean_seconds_to_first_correct", Optional(summary.mean_first_correct_s)},
          {"llm_usd", summary.llm_usd},
          {"llm_usd_per_speedup", Optional(summary.usd_per_speedup)}};
}

nlohmann::json ToJson(const SuiteTaskResult& task) {
  nlohmann::json fast_reference = nlohmann::json::object(), fast_baseline = nlohmann::json::object();
  for (std::size_t i = 0; i < kFastP.size(); ++i) {
    const std::string key = i == 2 ? "1.5" : std::to_string(static_cast<int>(kFastP[i]));
    fast_reference[key] = FastOverReference(task, kFastP[i]);
    fast_baseline[key] = FastOverBaseline(task, kFastP[i]);
  }
  const bool baseline = task.baseline_speedup > 0.0;
  return {{"task", task.task},
          {"level", task.level},
          {"state", task.state},
          {"reason", task.reason},
          {"run", task.run_id > 0 ? nlohmann::json(task.run_id) : nlohmann::json()},
          {"correct", task.correct},
          {"labelled_out", task.labelled_out},
          {"best_node", task.best_node > 0 ? nlohmann::json(task.best_node) : nlohmann::json()},
          {"speedup", task.correct ? nlohmann::json(task.speedup) : nlohmann::json()},
          {"noise", task.noise},
          {"baseline_speedup", baseline ? nlohmann::json(task.baseline_speedup) : nlohmann::json()},
          {"speedup_over_baseline", baseline && task.correct ? nlohmann::json(OverBaseline(task)) : nlohmann::json()},
          {"fast_p_reference", fast_reference},
          {"fast_p_baseline", baseline ? fast_baseline : nlohmann::json()},
          {"roofline_fraction", task.roofline_fraction > 0 ? nlohmann::json(task.roofline_fraction) : nlohmann::json()},
          {"gap_closed", task.correct ? Optional(GapClosed(task.speedup, task.roofline_fraction)) : nlohmann::json()},
          {"evaluations", task.evaluations},
          {"active_seconds", task.active_seconds},
          {"evaluations_per_hour",
           task.active_seconds > 0 ? nlohmann::json(task.evaluations * 3600.0 / task.active_seconds) : nlohmann::json()},
          {"seconds_to_first_correct", Optional(task.first_correct_s)},
          {"llm_usd", task.llm_usd},
          {"llm_usd_per_speedup", FastOverReference(task, 1.0) ? nlohmann::json(task.llm_usd) : nlohmann::json()}};
}

}  // namespace

Result<SuiteReport> BuildSuiteReport(Store& store, std::int64_t suite_id) {
  SuiteReport report;
  auto suite = store.GetSuite(suite_id);
  if (!suite) return Fail(suite.error());
  report.suite = *suite;
  auto tasks = store.SuiteTasks(suite_id);
  if (!tasks) return Fail(tasks.error());
  std::set<int> levels;
  for (const SuiteTaskRecord& record : *tasks) {
    SuiteTaskResult result;
    result.task = record.task;
    result.level = record.level;
    result.state = std::string(ToString(record.state));
    result.reason = record.reason;
    result.run_id = record.run_id;
    if (record.run_id > 0) {
      if (auto read = ReadRun(store, result); !read) return Fail(read.error());
    }
    levels.insert(record.level);
    report.tasks.push_back(std::move(result));
  }
  for (int level : levels) {
    std::vector<SuiteTaskResult> of_level;
    std::copy_if(report.tasks.begin(), report.tasks.end(), std::back_inserter(of_level),
                 [level](const SuiteTaskResult& task) { return task.level == level; });
    report.levels.push_back(Summarize(of_level, level));
  }
  report.total = Summarize(report.tasks, 0);
  return report;
}

nlohmann::json ToJson(const SuiteReport& report) {
  nlohmann::json tasks = nlohmann::json::array(), levels = nlohmann::json::array();
  for (const SuiteTaskResult& task : report.tasks) tasks.push_back(ToJson(task));
  for (const SuiteSummary& level : report.levels) levels.push_back(ToJson(level, level.with_baseline > 0));
  // Written by the suite runner as JSON; a damaged column is shown as its text.
  const auto parsed = [](const std::string& text) {
    nlohmann::json value = nlohmann::json::parse(text, nullptr, false);
    return value.is_discarded() ? nlohmann::json(text) : value;
  };
  const nlohmann::json selection = parsed(report.suite.selection_json), budget = parsed(report.suite.budget_json);
  return {{"suite", report.suite.id},
          {"state", std::string(ToString(report.suite.state))},
          {"created_at", report.suite.created_at},
          {"finished_at", report.suite.finished_at > 0 ? nlohmann::json(report.suite.finished_at) : nlohmann::json()},
          {"selection", selection},
          {"budget_per_task", budget},
          {"tasks", tasks},
          {"levels", levels},
          {"total", ToJson(report.total, report.total.with_baseline > 0)}};
}

}  // namespace kestrel
