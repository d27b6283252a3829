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
//                for its estimate before it is made. It is refused as spent
//                when the settled spend and its estimate alone would pass the
//                limit (the run stops), and as held when only the
//                reservations of calls in flight leave no room (the run goes
//                on: it may fit once they settle)
//   plateau      results in a row without a new best
//   roofline     a confirmed best at this fraction of the roofline or above
//
// Thread-safe: the LLM mutators reserve and settle on TBB workers while the
// engine checks under its own lock.

#include <condition_variable>
#include <cstdint>
#include <functional>
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

// What Budget::Reserve made of an LLM call's estimate: true when it was
// reserved (make the call, then Settle).
struct Reservation {
  enum class Kind {
    kMade,
    kHeld,   // refused: the calls in flight hold the rest; a later try may fit
    kSpent,  // refused: the settled spend and the estimate pass the usd budget
  };
  Kind kind = Kind::kMade;
  std::uint64_t settles = 0;  // calls settled when it was answered (AwaitSettle)

  explicit operator bool() const { return kind == Kind::kMade; }
  bool held() const { return kind == Kind::kHeld; }
  bool spent() const { return kind == Kind::kSpent; }
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

  // Reserves `estimate` USD for an LLM call, or says why not (nothing is
  // reserved then): spent when spent + estimate would pass the usd budget,
  // held when only the reservations in flight make it pass.
  Reservation Reserve(double estimate);
  // Replaces a reservation of `estimate` by the call's actual `cost`.
  void Settle(double estimate, double cost);
  // After Reserve answered `held`: waits until a call settles (the room it
  // may free), or until `cancelled` (may be empty; polled every 100 ms
  // outside the lock) says so.
  void AwaitSettle(const Reservation& held, const std::function<bool()>& cancelled);
  double usd_spent() const;

  const BudgetSpent& before() const { return before_; }

 private:
  BudgetConfig limits_;
  BudgetSpent before_;
  mutable std::mutex mutex_;  // guards the three below
  double usd_spent_;
  double usd_reserved_ = 0.0;
  std::uint64_t settles_ = 0;  // calls settled so far
  std::condition_variable settled_;
};

}  // namespace kestrel
