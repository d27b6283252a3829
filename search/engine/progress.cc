#include "search/engine/progress.h"

#include <algorithm>
#include <cmath>
#include <ostream>

#include <fmt/format.h>

namespace kestrel {
namespace {

std::string Clock(double seconds) {
  const auto total = static_cast<std::int64_t>(std::max(0.0, seconds));
  const std::int64_t h = total / 3600, m = total / 60 % 60, s = total % 60;
  if (h > 0) return fmt::format("{}h{:02}m{:02}s", h, m, s);
  return fmt::format("{}m{:02}s", m, s);
}

}  // namespace

std::string StatusLine(const ProgressSnapshot& snapshot) {
  const double minutes = snapshot.elapsed_s / 60.0;
  const double rate = minutes > 0 ? static_cast<double>(snapshot.evaluations) / minutes : 0.0;
  std::string line = fmt::format("[{:>8}] {} evals ({:.1f}/min)", Clock(snapshot.elapsed_s),
                                 snapshot.spent_evaluations + snapshot.evaluations, rate);
  std::string outcomes;
  // measured first, then the failures, each in name order.
  if (const auto measured = snapshot.outcomes.find("measured"); measured != snapshot.outcomes.end()) {
    outcomes = fmt::format(" {} measured", measured->second);
  }
  for (const auto& [name, count] : snapshot.outcomes) {
    if (name != "measured") outcomes += fmt::format(" {} {}", count, name);
  }
  if (!outcomes.empty()) line += " |" + outcomes;
  line += snapshot.best_node > 0 ? fmt::format(" | best {:.2f}x (node {})", snapshot.best_speedup, snapshot.best_node)
                                 : std::string(" | no measured kernel yet");
  if (snapshot.time_left_s) line += " | " + Clock(*snapshot.time_left_s) + " left";
  if (snapshot.evaluations_left) line += fmt::format(" | {} evals left", std::max<std::int64_t>(0, *snapshot.evaluations_left));
  if (snapshot.usd_spent > 0 || snapshot.usd_budget) {
    line += fmt::format(" | ${:.2f}", snapshot.usd_spent);
    if (snapshot.usd_budget) line += fmt::format(" of ${:.2f}", *snapshot.usd_budget);
  }
  return line;
}

ProgressReporter::ProgressReporter(std::ostream* out, ProgressMode mode, double interval_s)
    : out_(out),
      mode_(mode),
      interval_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::max(0.2, interval_s)))) {}

void ProgressReporter::ClearLive() {
  if (live_width_ == 0) return;
  *out_ << '\r' << std::string(live_width_, ' ') << '\r';
  live_width_ = 0;
}

void ProgressReporter::Draw(const ProgressSnapshot& snapshot) {
  last_draw_ = Clock::now();
  const std::string line = StatusLine(snapshot);
  if (mode_ == ProgressMode::kLive) {
    ClearLive();
    *out_ << line << std::flush;
    live_width_ = line.size();
  } else {
    *out_ << line << '\n' << std::flush;
  }
}

void ProgressReporter::Event(const std::string& line) {
  if (!out_) return;
  ClearLive();
  *out_ << line << '\n' << std::flush;
  // The live line is redrawn on the next result or tick.
}

void ProgressReporter::Result(const std::string& line, const ProgressSnapshot& snapshot) {
  if (!out_) return;
  if (mode_ == ProgressMode::kEachResult) {
    *out_ << line << '\n' << std::flush;
    return;
  }
  if (mode_ == ProgressMode::kLive && Clock::now() - last_draw_ >= std::chrono::milliseconds(200)) Draw(snapshot);
  if (mode_ == ProgressMode::kInterval) Tick(snapshot);
}

void ProgressReporter::Tick(const ProgressSnapshot& snapshot) {
  if (!out_ || mode_ == ProgressMode::kEachResult) return;
  const auto due = mode_ == ProgressMode::kLive ? std::chrono::duration_cast<Clock::duration>(std::chrono::seconds(1))
                                                : interval_;
  if (Clock::now() - last_draw_ >= due) Draw(snapshot);
}

void ProgressReporter::Finish(const ProgressSnapshot& snapshot) {
  if (!out_) return;
  if (mode_ == ProgressMode::kLive) {
    Draw(snapshot);
    *out_ << '\n' << std::flush;
    live_width_ = 0;
  } else if (mode_ == ProgressMode::kInterval) {
    Draw(snapshot);
  }
}

}  // namespace kestrel
