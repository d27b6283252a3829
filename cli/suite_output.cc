#include "cli/suite_output.h"

#include <ostream>

#include <fmt/format.h>

#include "cli/output.h"
#include "search/suite/suite_report.h"

namespace kestrel::cli {
namespace {

std::string Percent(double share) { return fmt::format("{:.0f}%", share * 100.0); }

std::string OrDash(const std::optional<double>& value, const std::string& format) {
  return value ? fmt::format(fmt::runtime(format), *value) : "-";
}

// "1 1.5 2" as the fast_p thresholds read: the highest p the task beats, "-" none.
std::string FastestP(bool (*fast)(const SuiteTaskResult&, double), const SuiteTaskResult& task) {
  std::string highest = "-";
  for (double p : kFastP) {
    if (p > 0 && fast(task, p)) highest = p == 1.5 ? "1.5" : fmt::format("{:.0f}", p);
  }
  return highest;
}

std::string FastShares(const std::array<double, kFastP.size()>& shares) {
  return fmt::format("fast_0 {} fast_1 {} fast_1.5 {} fast_2 {}", Percent(shares[0]), Percent(shares[1]),
                     Percent(shares[2]), Percent(shares[3]));
}

// "level 2", or "no level" for tasks without one.
std::string LevelName(int level) { return level > 0 ? fmt::format("level {}", level) : "no level"; }

std::string SummaryLine(const SuiteSummary& summary, const std::string& name) {
  std::string line = fmt::format("{}: {} tasks", name, summary.tasks);
  if (summary.skipped > 0) line += fmt::format(" ({} not run)", summary.skipped);
  if (summary.tasks == 0) return line;
  line += fmt::format(", pass {}/{}; over the reference {}, geomean {}", summary.correct, summary.tasks,
                      FastShares(summary.fast_reference), FormatSpeedup(summary.geomean_reference));
  if (summary.with_baseline > 0) {
    line += fmt::format("; over the baseline ({} tasks) {}, geomean {}", summary.with_baseline,
                        FastShares(summary.fast_baseline), FormatSpeedup(summary.geomean_baseline));
  }
  line += fmt::format("; roofline {}, gap closed {}, {:.0f} evals/h, first correct after {}, LLM ${:.2f}",
                      summary.mean_roofline ? FormatRoofline(*summary.mean_roofline) : "-",
                      OrDash(summary.mean_gap_closed ? std::optional<double>(*summary.mean_gap_closed * 100) : std::nullopt,
                             "{:.0f}%"),
                      summary.evaluations_per_hour, OrDash(summary.mean_first_correct_s, "{:.1f} s"), summary.llm_usd);
  if (summary.usd_per_speedup) line += fmt::format(" (${:.2f} per confirmed speedup)", *summary.usd_per_speedup);
  return line;
}

void PrintLevel(std::ostream& out, const SuiteReport& report, const SuiteSummary& summary) {
  out << LevelName(summary.level) << "\n";
  Table table({"task", "state", "correct", "speedup", "±noise", "vs baseline", "fast_p", "fast_p base", "roofline",
               "gap closed", "evals/h", "first correct", "LLM $", "run"});
  for (const SuiteTaskResult& task : report.tasks) {
    if (task.level != summary.level) continue;
    const auto gap = task.correct ? GapClosed(task.speedup, task.roofline_fraction) : std::nullopt;
    table.Add({task.task, task.reason.empty() ? task.state : task.state + ": " + task.reason,
               task.correct ? "yes" : (task.run_id > 0 ? "no" : "-"),
               task.correct ? FormatSpeedup(task.speedup) : "-",
               task.correct ? fmt::format("{:.1f}%", task.noise * 100) : "-",
               task.correct ? FormatOverBaseline(task.speedup, task.baseline_speedup) : "-",
               FastestP(&FastOverReference, task),
               task.baseline_speedup > 0 ? FastestP(&FastOverBaseline, task) : "-",
               task.correct ? FormatRoofline(task.roofline_fraction) : "-",
               gap ? fmt::format("{:.0f}%", *gap * 100) : "-",
               task.active_seconds > 0 ? fmt::format("{:.0f}", task.evaluations * 3600.0 / task.active_seconds) : "-",
               OrDash(task.first_correct_s, "{:.1f} s"), fmt::format("{:.2f}", task.llm_usd),
               task.run_id > 0 ? std::to_string(task.run_id) : "-"});
  }
  table.Print(out);
  out << SummaryLine(summary, LevelName(summary.level)) << "\n\n";
}

}  // namespace

void PrintSuiteReport(std::ostream& out, const SuiteReport& report) {
  out << "suite " << report.suite.id << " (" << ToString(report.suite.state) << ", started "
      << FormatTimestamp(report.suite.created_at) << ", each task: " << report.suite.budget_json << ")\n\n";
  for (const SuiteSummary& level : report.levels) PrintLevel(out, report, level);
  if (report.levels.size() > 1) out << SummaryLine(report.total, "all levels") << "\n";
  out << "fast_p: the highest p of 1, 1.5, 2 the speedup beats beyond its noise (docs/SUITE.md)\n";
}

}  // namespace kestrel::cli
