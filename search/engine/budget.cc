#include "search/engine/budget.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace kestrel {

BudgetSpent SpentBy(const RunRecord& run, const std::vector<RunEventRecord>& events) {
  constexpr std::int64_t kNone = -1;
  double seconds = 0.0;
  std::int64_t session_start = kNone;
  std::int64_t last = 0;
  const auto close_session = [&](std::int64_t end) {
    if (session_start != kNone) seconds += static_cast<double>(end - session_start) / 1000.0;
    session_start = kNone;
  };
  for (const RunEventRecord& event : events) {
    // A session killed before its "stop" ends at its last event; the next
    // session's "resume" (written before its "start") closes it there, so
    // that the time the run lay dead is not counted.
    if (event.kind == "resume" || event.kind == "start") close_session(last);
    if (event.kind == "start") session_start = event.at;
    last = event.at;
    if (event.kind == "stop") close_session(event.at);
  }
  close_session(last);
  return {run.evaluations, seconds, run.llm_usd};
}

BudgetConfig WithDefaultTime(BudgetConfig limits) {
  if (!limits.time && !limits.evaluations && !limits.plateau) limits.time = Seconds(600);
  return limits;
}

Budget::Budget(BudgetConfig limits, BudgetSpent before)
    : limits_(std::move(limits)), before_(before), usd_spent_(before.usd) {}

std::optional<StopKind> Budget::Check(const BudgetUse& use) const {
  if (limits_.time && use.seconds && Seconds(before_.seconds + *use.seconds) >= *limits_.time) return StopKind::kTime;
  if (limits_.usd && use.seconds && usd_spent() >= *limits_.usd) return StopKind::kUsd;
  if (limits_.evaluations && use.evaluations && before_.evaluations + *use.evaluations >= *limits_.evaluations) {
    return StopKind::kEvaluations;
  }
  if (limits_.plateau && use.since_best && *use.since_best >= *limits_.plateau) return StopKind::kPlateau;
  return std::nullopt;
}

BudgetLeft Budget::Left(double session_seconds, std::int64_t recorded) const {
  BudgetLeft left;
  if (limits_.time) left.seconds = limits_.time->count() - before_.seconds - session_seconds;
  if (limits_.evaluations) left.evaluations = *limits_.evaluations - before_.evaluations - recorded;
  left.usd_spent = usd_spent();
  left.usd_budget = limits_.usd;
  return left;
}

void Budget::Extend(std::optional<Seconds> time, std::optional<std::int64_t> evaluations) {
  // From what was used when that is past the limit (a run overruns its time
  // by its final confirmation, its evaluations by those in flight): the
  // extension is all the person's, not partly eaten by the overrun.
  if (time) limits_.time = std::max(limits_.time.value_or(Seconds(0)), Seconds(before_.seconds)) + *time;
  if (evaluations) {
    limits_.evaluations = std::max(limits_.evaluations.value_or(0), before_.evaluations) + *evaluations;
  }
}

// Each call reserves its worst case, so a few calls in flight fill the
// budget on paper while most of it is still there: only what was settled
// can spend it.
Reservation Budget::Reserve(double estimate) {
  std::lock_guard lock(mutex_);
  Reservation reservation;
  reservation.settles = settles_;
  if (limits_.usd && usd_spent_ + estimate > *limits_.usd) {
    reservation.kind = Reservation::Kind::kSpent;
  } else if (limits_.usd && usd_spent_ + usd_reserved_ + estimate > *limits_.usd) {
    reservation.kind = Reservation::Kind::kHeld;
  } else {
    usd_reserved_ += estimate;
  }
  return reservation;
}

void Budget::Settle(double estimate, double cost) {
  {
    std::lock_guard lock(mutex_);
    usd_reserved_ -= estimate;
    usd_spent_ += cost;
    ++settles_;
  }
  settled_.notify_all();
}

void Budget::AwaitSettle(const Reservation& held, const std::function<bool()>& cancelled) {
  constexpr auto kPoll = std::chrono::milliseconds(100);
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      if (settled_.wait_for(lock, kPoll, [&] { return settles_ != held.settles; })) return;
    }
    if (cancelled && cancelled()) return;
  }
}

double Budget::usd_spent() const {
  std::lock_guard lock(mutex_);
  return usd_spent_;
}

}  // namespace kestrel
