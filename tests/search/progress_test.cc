// The progress reporter (search/engine/progress.h): the status line's content and
// when each mode prints.

#include <doctest.h>

#include <sstream>
#include <string>
#include <thread>

#include "search/engine/progress.h"

using namespace kestrel;

namespace {

ProgressSnapshot Snapshot() {
  ProgressSnapshot snapshot;
  snapshot.evaluations = 30;
  snapshot.spent_evaluations = 12;
  snapshot.outcomes = {{"build_failed", 2}, {"measured", 25}, {"wrong", 3}};
  snapshot.best_speedup = 26.357;
  snapshot.best_node = 88;
  snapshot.elapsed_s = 600;
  snapshot.time_left_s = 3725;
  snapshot.evaluations_left = 58;
  snapshot.usd_spent = 0.4213;
  snapshot.usd_budget = 5.0;
  return snapshot;
}

int Count(const std::string& text, char c) {
  int count = 0;
  for (char x : text) count += x == c;
  return count;
}

}  // namespace

TEST_SUITE("progress") {
  TEST_CASE("the status line has evaluations, rate, outcomes, best, budget left and spend") {
    const std::string line = StatusLine(Snapshot());
    CHECK(line == "[  10m00s] 42 evals (3.0/min) | 25 measured 2 build_failed 3 wrong | best 26.36x (node 88) | "
                  "1h02m05s left | 58 evals left | $0.42 of $5.00");
    ProgressSnapshot empty;
    CHECK(StatusLine(empty) == "[   0m00s] 0 evals (0.0/min) | no measured kernel yet");
  }

  TEST_CASE("interval mode: a status line per interval, events at once, a last line at the end") {
    std::ostringstream out;
    ProgressReporter reporter(&out, ProgressMode::kInterval, 0.3);
    reporter.Result("[1] node 1", Snapshot());  // the first line is due at once
    CHECK(Count(out.str(), '\n') == 1);
    for (int i = 0; i < 20; ++i) reporter.Result("[i] node i", Snapshot());
    CHECK(Count(out.str(), '\n') == 1);  // not before the interval
    reporter.Event("kestrel: new best 3.00x: node 7");
    CHECK(Count(out.str(), '\n') == 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(350));
    reporter.Tick(Snapshot());
    CHECK(Count(out.str(), '\n') == 3);
    reporter.Finish(Snapshot());
    CHECK(Count(out.str(), '\n') == 4);
    CHECK(out.str().find("[i] node i") == std::string::npos);
    CHECK(out.str().find('\r') == std::string::npos);
  }

  TEST_CASE("live mode redraws one line in place and ends it with a newline") {
    std::ostringstream out;
    ProgressReporter reporter(&out, ProgressMode::kLive, 10);
    reporter.Result("[1] node 1", Snapshot());
    CHECK(Count(out.str(), '\n') == 0);
    reporter.Event("kestrel: new best 3.00x: node 7");  // clears the live line, prints above it
    CHECK(out.str().find("\rkestrel: new best") != std::string::npos);
    reporter.Finish(Snapshot());
    const std::string text = out.str();
    CHECK(text.back() == '\n');
    CHECK(Count(text, '\n') == 2);
  }

  TEST_CASE("each-result mode prints the result lines; a null stream prints nothing") {
    std::ostringstream out;
    ProgressReporter reporter(&out, ProgressMode::kEachResult, 10);
    reporter.Result("[1] node 1", Snapshot());
    reporter.Result("[2] node 2", Snapshot());
    reporter.Tick(Snapshot());
    CHECK(out.str() == "[1] node 1\n[2] node 2\n");
    ProgressReporter quiet(nullptr, ProgressMode::kLive, 10);
    quiet.Result("x", Snapshot());
    quiet.Event("y");
    quiet.Finish(Snapshot());
  }
}
