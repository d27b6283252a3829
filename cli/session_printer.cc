#include "cli/session_printer.h"

#include <memory>
#include <optional>
#include <ostream>

#include <fmt/format.h>

#include "search/engine/line_prefix.h"

namespace kestrel::cli {
namespace {

// The stream the handlers share: `out` until the run turns out unconfined.
struct Printer {
  explicit Printer(std::ostream& out) : out(out) {}
  void Line(const std::string& text) { (prefixed ? *prefixed : out) << text << '\n' << std::flush; }

  std::ostream& out;
  std::optional<LinePrefixStream> prefixed;
};

}  // namespace

SessionEvents PrintSessionEvents(std::ostream& out) {
  auto printer = std::make_shared<Printer>(out);
  SessionEvents events;
  events.task_note = [printer](const std::string& note) { printer->Line(note); };
  events.building_reference = [printer](const std::string& task) {
    printer->Line("kestrel: building the reference of " + task + "...");
  };
  events.calibrating = [printer] { printer->Line("kestrel: calibrating this host (peak FLOP/s and bandwidths, once)..."); };
  events.calibrated = [printer](const Calibration& measured, int threads) {
    printer->Line(fmt::format("kestrel: {:.0f} GFLOP/s peak; L1 {:.0f}, L2 {:.0f}, L3 {:.0f}, DRAM {:.1f} GB/s ({} thread{})",
                              measured.peak_gflops, measured.l1_gbps, measured.l2_gbps, measured.l3_gbps,
                              measured.dram_gbps, threads, threads == 1 ? "" : "s"));
  };
  events.calibration_failed = [printer](const std::string& why) {
    printer->Line("kestrel: no calibration (" + why + "); roofline checks are off for this run");
  };
  events.unconfined = [printer] {
    printer->prefixed.emplace(printer->out, "[NO SANDBOX] ");
    printer->Line("kestrel: evaluator.sandbox is \"none\": kernels run unconfined, with access to this machine, its "
                  "files and this database");
  };
  events.started = [printer](const RunOpened& run, const std::string& strategy, const std::string& db) {
    printer->Line(fmt::format("kestrel: run {} on task {} (graph {}), strategy {}, db {}", run.run_id, run.task,
                              run.graph_id, strategy, db));
  };
  events.resumed = [printer](const RunOpened& run, const BudgetSpent& spent) {
    printer->Line(fmt::format("kestrel: resuming run {} on task {} (graph {}): {} evaluations, {:.0f}s and ${:.2f} "
                              "spent so far",
                              run.run_id, run.task, run.graph_id, spent.evaluations, spent.seconds, spent.usd));
  };
  return events;
}

}  // namespace kestrel::cli
