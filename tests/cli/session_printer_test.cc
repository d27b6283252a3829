// What `kestrel run`, `resume` and `eval` print while a session prepares
// (cli/session_printer.h): the same lines the session used to write itself,
// and the [NO SANDBOX] prefix on every line after an unconfined evaluator.

#include <doctest.h>

#include <sstream>

#include "cli/session_printer.h"

using namespace kestrel;

TEST_SUITE("session_printer") {
  TEST_CASE("each event is its line") {
    std::ostringstream out;
    const SessionEvents events = cli::PrintSessionEvents(out);
    events.started(RunOpened{4, "softmax", 2}, "graph-ucb", "kestrel.db");
    events.building_reference("softmax");
    events.calibrating();
    // threads, peak GFLOP/s, L1, L2, L3 and DRAM GB/s, no curve, seconds taken
    const Calibration calibration{1, 123.4, 500.2, 300.0, 150.7, 20.25, {}, 2.0};
    events.calibrated(calibration, 1);
    events.calibrated(calibration, 4);
    events.calibration_failed("no peak");
    events.resumed(RunOpened{4, "softmax", 2}, BudgetSpent{12, 61.6, 0.125});
    CHECK(out.str() ==
          "kestrel: run 4 on task softmax (graph 2), strategy graph-ucb, db kestrel.db\n"
          "kestrel: building the reference of softmax...\n"
          "kestrel: calibrating this host (peak FLOP/s and bandwidths, once)...\n"
          "kestrel: 123 GFLOP/s peak; L1 500, L2 300, L3 151, DRAM 20.2 GB/s (1 thread)\n"
          "kestrel: 123 GFLOP/s peak; L1 500, L2 300, L3 151, DRAM 20.2 GB/s (4 threads)\n"
          "kestrel: no calibration (no peak); roofline checks are off for this run\n"
          "kestrel: resuming run 4 on task softmax (graph 2): 12 evaluations, 62s and $0.12 spent so far\n");
  }

  TEST_CASE("after an unconfined evaluator, every line says so") {
    std::ostringstream out;
    const SessionEvents events = cli::PrintSessionEvents(out);
    events.building_reference("triad");
    events.unconfined();
    events.calibrating();
    CHECK(out.str() ==
          "kestrel: building the reference of triad...\n"
          "[NO SANDBOX] kestrel: evaluator.sandbox is \"none\": kernels run unconfined, with access to this machine, "
          "its files and this database\n"
          "[NO SANDBOX] kestrel: calibrating this host (peak FLOP/s and bandwidths, once)...\n");
  }
}
