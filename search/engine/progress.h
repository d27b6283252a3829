#pragma once
// Progress: what a running search tells its user while it runs.
//
//   kLive        on a terminal: one status line redrawn in place (at most five
//                times a second), notable events printed above it
//   kInterval    elsewhere (a log file, CI): the status line as a log line every
//                `interval_s`, notable events as they happen
//   kEachResult  a line per recorded result (tests, --verbose)
//
// The status line: evaluations, rate, outcomes, best speedup, budget left and
// LLM spend, e.g.
//   [ 12m04s] 231 evals (19.1/min) | 201 measured 18 wrong 12 build_failed | best 26.36x (node 88) | 47m56s left | $0.42
//
// Thread-safety: none; the engine calls it under its mutex.

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>

namespace kestrel {

enum class ProgressMode { kLive, kInterval, kEachResult };

struct ProgressSnapshot {
  std::int64_t evaluations = 0;  // results recorded by this session
  std::int64_t spent_evaluations = 0;  // by earlier sessions of the run
  std::map<std::string, std::int64_t> outcomes;  // this session's, by outcome name
  double best_speedup = 0.0;
  std::int64_t best_node = 0;  // 0: none yet
  double elapsed_s = 0.0;  // this session
  std::optional<double> time_left_s;
  std::optional<std::int64_t> evaluations_left;
  double usd_spent = 0.0;  // the run's, earlier sessions included
  std::optional<double> usd_budget;
};

// The one-line summary above (no newline).
std::string StatusLine(const ProgressSnapshot& snapshot);

class ProgressReporter {
 public:
  // `out` nullptr: quiet (every call does nothing).
  ProgressReporter(std::ostream* out, ProgressMode mode, double interval_s);

  // A notable line ("new best ...", "the llm mutator stopped ..."), printed at once.
  void Event(const std::string& line);
  // A result was recorded: `line` describes it (printed in kEachResult mode).
  void Result(const std::string& line, const ProgressSnapshot& snapshot);
  // Time passed: redraws (live) or logs (interval) when due.
  void Tick(const ProgressSnapshot& snapshot);
  // Ends the live line so that what follows starts on a fresh line.
  void Finish(const ProgressSnapshot& snapshot);

 private:
  using Clock = std::chrono::steady_clock;
  void Draw(const ProgressSnapshot& snapshot);
  void ClearLive();

  std::ostream* out_;
  ProgressMode mode_;
  Clock::duration interval_;
  Clock::time_point last_draw_{};
  std::size_t live_width_ = 0;  // characters of the live line on screen
};

}  // namespace kestrel
