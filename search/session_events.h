#pragma once
// What one session of a run (search/run_session.h) tells its user as it goes;
// the session prints nothing itself, the CLI prints these
// (cli/session_printer.h). Every handler may be empty: nobody listens.

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "core/roofline.h"
#include "search/engine/budget.h"

namespace kestrel {

struct RunOpened {
  std::int64_t run_id = 0;
  std::string task;
  std::int64_t graph_id = 0;
};

struct SessionEvents {
  // A line about the task the run found (a user's folder that shadows a built-in task).
  std::function<void(const std::string& note)> task_note;
  std::function<void(const std::string& task)> building_reference;
  std::function<void()> calibrating;
  std::function<void(const Calibration& calibration, int threads)> calibrated;
  // The run goes on without a calibration (roofline checks off).
  std::function<void(const std::string& why)> calibration_failed;
  // Kernels run unconfined (evaluator.sandbox "none"), by the user's choice.
  std::function<void()> unconfined;
  std::function<void(const RunOpened& run, const std::string& strategy, const std::string& db)> started;
  // `spent`: what the run's earlier sessions used.
  std::function<void(const RunOpened& run, const BudgetSpent& spent)> resumed;
};

// Calls `handler` with `args` when someone listens.
template <class Handler, class... Args>
void Notify(const Handler& handler, Args&&... args) {
  if (handler) handler(std::forward<Args>(args)...);
}

}  // namespace kestrel
