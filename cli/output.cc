#include "cli/output.h"

#include <algorithm>
#include <ctime>
#include <iostream>
#include <ostream>

#include <unistd.h>

#include <fmt/format.h>

#include "cli/cli.h"
#include "cli/session_printer.h"
#include "core/json_text.h"
#include "search/run_session.h"

namespace kestrel::cli {

Table::Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }

void Table::Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

namespace {

// Columns on a terminal: UTF-8 code points (continuation bytes take none).
std::size_t Columns(const std::string& text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

void Table::Print(std::ostream& out) const {
  std::vector<std::size_t> widths;
  for (const auto& row : rows_) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], Columns(row[i]));
  }
  for (const auto& row : rows_) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - Columns(row[i]) + 2, ' ');
    }
    out << line << "\n";
  }
}

std::string FormatTimestamp(std::int64_t millis) {
  if (millis <= 0) return "-";
  const std::time_t seconds = static_cast<std::time_t>(millis / 1000);
  std::tm local{};
  localtime_r(&seconds, &local);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%d %H:%M:%S", &local);
  return buffer;
}

std::string FormatSeconds(double seconds) {
  if (seconds < 1e-6) return fmt::format("{:.0f} ns", seconds * 1e9);
  if (seconds < 1e-3) return fmt::format("{:.2f} us", seconds * 1e6);
  if (seconds < 1.0) return fmt::format("{:.3f} ms", seconds * 1e3);
  return fmt::format("{:.3f} s", seconds);
}

std::string FormatSpeedup(double speedup) { return fmt::format("{:.2f}x", speedup); }

nlohmann::json ToJson(const SampleStats& stats) {
  return {{"median_s", stats.median}, {"p10_s", stats.p10}, {"p90_s", stats.p90},
          {"spread", stats.spread},   {"samples", stats.count}};
}

// The speedup over the task's baseline, or null when there is none.
nlohmann::json BaselineJson(double speedup, double baseline_speedup) {
  const double over = SpeedupOverBaseline(speedup, baseline_speedup);
  return over > 0 ? nlohmann::json(over) : nlohmann::json();
}

nlohmann::json ToJson(const Measurement& measurement, bool with_samples) {
  nlohmann::json shapes = nlohmann::json::array();
  for (const ShapeTiming& timing : measurement.shapes) {
    nlohmann::json shape = {{"shape", timing.shape},
                            {"candidate", ToJson(timing.candidate)},
                            {"reference", ToJson(timing.reference)},
                            {"speedup", timing.speedup},
                            {"gflops", timing.gflops},
                            {"gbps", timing.gbps},
                            {"roofline_fraction", timing.roofline_fraction}};
    if (with_samples) {
      shape["candidate"]["samples_s"] = timing.candidate_seconds;
      shape["reference"]["samples_s"] = timing.reference_seconds;
    }
    if (timing.candidate_calls_per_sample > 0) {
      shape["candidate"]["calls_per_sample"] = timing.candidate_calls_per_sample;
      shape["reference"]["calls_per_sample"] = timing.reference_calls_per_sample;
    }
    shapes.push_back(shape);
  }
  nlohmann::json mismatches = nlohmann::json::array();
  for (const Mismatch& mismatch : measurement.mismatches) {
    mismatches.push_back({{"shape_index", mismatch.shape_index},
                          {"input_set", mismatch.input_set},
                          {"arg", mismatch.arg},
                          {"index", mismatch.index},
                          {"expected", mismatch.expected},
                          {"actual", mismatch.actual}});
  }
  return {{"outcome", ToString(measurement.outcome)},
          {"reason", measurement.reason},
          {"speedup", measurement.outcome == Outcome::kMeasured ? nlohmann::json(measurement.speedup) : nlohmann::json()},
          {"roofline_fraction", measurement.roofline_fraction},
          {"baseline_speedup", measurement.baseline_speedup > 0 ? nlohmann::json(measurement.baseline_speedup) : nlohmann::json()},
          {"speedup_over_baseline", BaselineJson(measurement.outcome == Outcome::kMeasured ? measurement.speedup : 0.0,
                                                 measurement.baseline_speedup)},
          {"shapes", shapes},
          {"mismatches", mismatches},
          {"build_seconds", measurement.build_seconds},
          {"eval_seconds", measurement.eval_seconds},
          {"input_sets", measurement.input_sets},
          {"seed", measurement.seed},
          {"log", measurement.log}};
}

nlohmann::json ToJson(const RunRecord& run) {
  return {{"id", run.id},
          {"task", run.task_name},
          {"graph", run.graph_id},
          {"status", ToString(run.status)},
          {"stop_reason", run.stop_reason},
          {"started_at", FormatTimestamp(run.started_at)},
          {"finished_at", run.finished_at ? nlohmann::json(FormatTimestamp(run.finished_at)) : nlohmann::json()},
          {"evaluations", run.evaluations},
          {"same_code", run.same_code},
          {"best_speedup", run.best_speedup ? nlohmann::json(*run.best_speedup) : nlohmann::json()}};
}

nlohmann::json ToJson(const BestRow& row) {
  return {{"node", row.node_id},      {"run", row.run_id},         {"task", row.task_name},
          {"host", row.host_name},    {"speedup", row.speedup},    {"knobs", row.knobs},
          {"mutation", row.mutation}, {"measurement", row.measurement_id},
          {"measured_at", FormatTimestamp(row.measured_at)}, {"roofline_fraction", row.roofline_fraction},
          {"measurements", row.measurements}, {"spread", row.spread}, {"confirmation", row.confirmation ? ToString(*row.confirmation) : ""},
          {"baseline_speedup", row.baseline_speedup > 0 ? nlohmann::json(row.baseline_speedup) : nlohmann::json()},
          {"speedup_over_baseline", BaselineJson(row.speedup, row.baseline_speedup)}};
}

std::string FormatConfidence(const BestRow& row) {
  // "confirmed: n=7 ±2.3%": the verdict of its latest confirmation round,
  // how many measured results the median is over, and their spread
  // ((max - min) / median).
  using enum ConfirmationVerdict;
  if (row.confirmation == kUnstable) return "UNSTABLE: failed a re-measurement";
  const std::string verdict = row.confirmation == kConfirmed || row.confirmation == kFinal ? "confirmed"
                              : row.confirmation == kWithinNoise                           ? "within noise"
                              : row.measurements > 1                                       ? "re-measured"
                                                                                           : "once";
  if (row.measurements < 2) return verdict;
  return fmt::format("{}: n={} ±{:.1f}%", verdict, row.measurements, 100.0 * row.spread);
}

nlohmann::json ToJson(const NodeRecord& node, bool with_source) {
  nlohmann::json json = {{"id", node.id},
                         {"graph", node.graph_id},
                         {"run", node.run_id},
                         {"identity", node.identity},
                         {"source_hash", node.source_hash},
                         {"knobs", node.knobs},
                         {"toolchain", node.toolchain},
                         {"flags", node.flags},
                         {"mutation", node.mutation},
                         {"status", ToString(node.status)},
                         {"reason", node.reason},
                         {"speedup", node.speedup ? nlohmann::json(*node.speedup) : nlohmann::json()},
                         {"created_at", FormatTimestamp(node.created_at)}};
  if (with_source) {
    json["source"] = node.source;
    json["log"] = node.log;
  }
  return json;
}

std::string FormatOverBaseline(double speedup, double baseline_speedup) {
  const double over = SpeedupOverBaseline(speedup, baseline_speedup);
  return over > 0 ? FormatSpeedup(over) : "-";
}

std::string FormatRoofline(double fraction) {
  if (fraction <= 0) return "-";
  return fmt::format("{:.1f}%", fraction * 100.0);
}

void PrintMeasurement(std::ostream& out, const Measurement& measurement) {
  out << "outcome: " << ToString(measurement.outcome);
  if (measurement.outcome == Outcome::kMeasured) {
    out << "  speedup " << FormatSpeedup(measurement.speedup);
    if (const double over = SpeedupOverBaseline(measurement.speedup, measurement.baseline_speedup); over > 0) {
      out << " (" << FormatSpeedup(over) << " over the baseline, itself " << FormatSpeedup(measurement.baseline_speedup)
          << ")";
    }
  }
  if (measurement.roofline_fraction > 0) out << "  " << FormatRoofline(measurement.roofline_fraction) << " of roofline";
  out << "\n";
  if (!measurement.reason.empty()) out << "reason:  " << measurement.reason << "\n";
  if (!measurement.shapes.empty()) {
    Table table({"shape", "candidate", "p10..p90", "reference", "speedup", "GFLOP/s", "GB/s", "roofline", "samples"});
    for (const ShapeTiming& timing : measurement.shapes) {
      table.Add({ToString(timing.shape), FormatSeconds(timing.candidate.median),
                 FormatSeconds(timing.candidate.p10) + ".." + FormatSeconds(timing.candidate.p90),
                 FormatSeconds(timing.reference.median), FormatSpeedup(timing.speedup),
                 timing.gflops > 0 ? fmt::format("{:.2f}", timing.gflops) : "-",
                 timing.gbps > 0 ? fmt::format("{:.2f}", timing.gbps) : "-",
                 FormatRoofline(timing.roofline_fraction), std::to_string(timing.candidate.count)});
    }
    table.Print(out);
  }
  if (measurement.outcome != Outcome::kMeasured && !measurement.log.empty()) out << "log:\n" << measurement.log << "\n";
}

void AddProgressFlags(CLI::App& command, ProgressFlags& flags) {
  command.add_flag("--quiet,-q", flags.quiet, "no progress on stderr");
  command.add_flag("--each", flags.each, "a progress line per result instead of a status line");
  command.add_option("--log-interval", flags.log_interval,
                     "seconds between status lines when stderr is not a terminal (default 10)")
      ->check(AboveZero());
}

void ApplyProgressFlags(const ProgressFlags& flags, SearchOptions& options) {
  options.progress = flags.quiet ? nullptr : &std::cerr;
  if (!flags.quiet) options.events = PrintSessionEvents(std::cerr);
  options.progress_mode = flags.each                  ? ProgressMode::kEachResult
                          : ::isatty(STDERR_FILENO)   ? ProgressMode::kLive
                                                      : ProgressMode::kInterval;
  options.log_interval_s = flags.log_interval;
}

std::string StopReasonText(const StopReason& reason) {
  switch (reason.kind) {
    case StopKind::kTime: return "the time budget is spent (time)";
    case StopKind::kEvaluations: return "the evaluation budget is spent (evaluations)";
    case StopKind::kUsd: return "the LLM spend budget is spent (usd)";
    case StopKind::kPlateau: return "no new best within the plateau budget (plateau)";
    case StopKind::kExhausted: return "nothing left to try: every candidate's mutators declined (exhausted)";
    case StopKind::kSignal: return "interrupted by a signal; `kestrel resume` continues it (signal)";
    case StopKind::kRoofline: return "a confirmed best reached the roofline budget's fraction (roofline)";
    case StopKind::kError: break;
  }
  return ToString(reason);
}

void PrintRunSummary(const RunSummary& summary, bool json) {
  std::ostream& out = std::cout;
  if (json) {
    out << JsonText(nlohmann::json{{"run", summary.run_id},
                                {"evaluations", summary.evaluations},
                                {"duplicates", summary.duplicates},
                                {"same_code", summary.same_code},
                                {"profiles", summary.profiles},
                                {"hidden_checks", summary.hidden_checks},
                                {"hidden_failures", summary.hidden_failures},
                                {"outcomes", summary.outcomes},
                                {"best_node", summary.best_node ? nlohmann::json(*summary.best_node) : nlohmann::json()},
                                {"best_speedup", summary.best_speedup},
                                {"stop_reason", ToString(summary.stop_reason)},
                                {"seconds", summary.seconds},
                                {"search_seconds", summary.search_seconds}},
                    2)
              << "\n";
    return;
  }
  std::string outcomes;
  for (const auto& [outcome, count] : summary.outcomes) outcomes += fmt::format(" {} {}", outcome, count);
  // The final confirmation follows the budget's stop: say what it took
  // when it is a visible share of the run.
  const double closing = summary.seconds - summary.search_seconds;
  const std::string closing_note =
      closing >= 1.0 && closing >= 0.05 * summary.seconds
          ? fmt::format(" (searched {:.0f}s, then {:.0f}s confirming the top)", summary.search_seconds, closing)
          : "";
  out << fmt::format("run {} stopped after {:.0f}s{}: {}\n", summary.run_id, summary.seconds, closing_note,
                     StopReasonText(summary.stop_reason));
  out << fmt::format("{} evaluations ({}), {} duplicate proposals skipped\n", summary.evaluations,
                     outcomes.empty() ? std::string("none") : outcomes.substr(1), summary.duplicates);
  if (summary.same_code > 0) {
    out << fmt::format("{} candidates were the same code as a measured node: not timed (same_code edges)\n",
                       summary.same_code);
  }
  if (summary.profiles > 0) {
    out << fmt::format("{} candidates profiled (kestrel show NODE --profile)\n", summary.profiles);
  }
  if (summary.hidden_checks > 0) {
    out << fmt::format("{} candidates checked on hidden shapes, {} of them wrong there (run events 'hidden_shape')\n",
                       summary.hidden_checks, summary.hidden_failures);
  }
  if (summary.best_node) {
    out << fmt::format("best: node {} at {} (kestrel show {}; kestrel export {})\n", *summary.best_node,
                             FormatSpeedup(summary.best_speedup), *summary.best_node, *summary.best_node);
  } else {
    out << "no kernel was measured\n";
  }
}

}  // namespace kestrel::cli
