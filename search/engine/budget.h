#pragma once
// Budget: the limits of one run (BudgetConfig) against what it has used, this
// session and earlier ones (kestrel resume) together; the only place that
// decides when a budget is spent.
//
//   time         the run's active seconds: before + this session's
//   evaluations  evaluations started: before + this session's (in flight
//                included); at the limit no more start, and work in flight
//                finishes
//   usd          the LLM spend: before + settled calls; a call is reserved
//                for its estimate before it is made, and refused when spent +
//                reserved + estimate would pass the limit
//   plateau      results in a row without a new best
//   roofline     a confirmed best at this fraction of the roofline or above
//
// Thread-safe: the LLM mutators reserve and settle on TBB workers while the
// engine checks under its own lock.

#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "core/duration.h"
#include "search/engine/stop_reason.h"
#include "search/run_config.h"
#include "store/records.h"

namespace kestrel {

// What earlier sessions of a run used.
struct BudgetSpent {
  std::int64_t evaluations = 0;
  double seconds = 0.0;
  double usd = 0.0;
};

// What earlier sessions of `run` used: its recorded evaluations and LLM
// spend, and its active time from its run events (each "start" to its
// "stop", or to the last event of a session that was killed).
BudgetSpent SpentBy(const RunRecord& run, const std::vector<RunEventRecord>& events);

// A search given no budget that ends it by itself stops after 10 minutes.
BudgetConfig WithDefaultTime(BudgetConfig limits);

// What this session has used so far; a field left empty is not checked.
struct BudgetUse {
  std::optional<double> seconds;            // active seconds of this session: time and usd
  std::optional<std::int64_t> evaluations;  // started by this session, in flight included: evaluations
  std::optional<std::int64_t> since_best;   // results without a new best, earlier sessions included: plateau

  static BudgetUse Active(double seconds) { return {seconds, std::nullopt, std::nullopt}; }
  static BudgetUse Started(std::int64_t evaluations) { return {std::nullopt, evaluations, std::nullopt}; }
  static BudgetUse SinceBest(std::int64_t results) { return {std::nullopt, std::nullopt, results}; }
};

// What is left, for the status line; a budget the run does not have is empty.
struct BudgetLeft {
  std::optional<double> seconds;  // negative once overrun
  std::optional<std::int64_t> evaluations;
  double usd_spent = 0.0;  // earlier sessions included
  std::optional<double> usd_budget;
};

class Budget {
 public:
  explicit Budget(BudgetConfig limits, BudgetSpent before = {});

  // The budget spent now, if any, in the order time, usd, evaluations,
  // plateau, each checked when `use` gives its field (usd with seconds: the
  // two that stop a run at once, watched on the clock).
  std::optional<StopKind> Check(const BudgetUse& use) const;
  // Whether a confirmed best at `fraction` of the roofline ends the run
  // (budget.roofline); false when the run has no such budget.
  bool RooflineReached(double fraction) const { return limits_.roofline && fraction >= *limits_.roofline; }
  // `session_seconds` of activity and `recorded` evaluations this session.
  BudgetLeft Left(double session_seconds, std::int64_t recorded) const;
  // Extends the time and evaluation budgets (kestrel resume --time,
  // --max-evals); one the run did not have starts from what it used. Before
  // the run starts: the limits are read without the lock.
  void Extend(std::optional<Seconds> time, std::optional<std::int64_t> evaluations);

  // Reserves `estimate` USD for an LLM call; false (nothing reserved) when
  // spent + reserved + estimate would pass the usd budget.
  bool Reserve(double estimate);
  // Replaces a reservation of `estimate` by the call's actual `cost`.
  void Settle(double estimate, double cost);
  double usd_spent() const;

  const BudgetSpent& before() const { return before_; }

 private:
  BudgetConfig limits_;
  BudgetSpent before_;
  mutable std::mutex mutex_;  // guards the two below
  double usd_spent_;
  double usd_reserved_ = 0.0;
};

}  // namespace kestrel
