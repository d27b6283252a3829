#pragma once
// Printing for the kestrel command: aligned tables for people, JSON
// documents for --json. The same outcome words in both.

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/measurement.h"
#include "search/engine/engine.h"
#include "store/records.h"

namespace kestrel::cli {

// Columns padded to their widest cell; the first row is the header.
class Table {
 public:
  explicit Table(std::vector<std::string> header);
  void Add(std::vector<std::string> row);
  void Print(std::ostream& out) const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

std::string FormatTimestamp(std::int64_t millis);  // "2026-12-02 14:37:40" (local time); "-" for 0
std::string FormatSeconds(double seconds);         // "812 ns", "1.25 ms", "2.00 s"
std::string FormatSpeedup(double speedup);         // "2.31x"

nlohmann::json ToJson(const SampleStats& stats);
nlohmann::json ToJson(const Measurement& measurement, bool with_samples);
nlohmann::json ToJson(const RunRecord& run);
nlohmann::json ToJson(const BestRow& row);
// How far to trust a best row: its confirmation and the spread of its
// measurements ("confirmed: n=3 ±1.2%", "once" for a single measurement).
std::string FormatConfidence(const BestRow& row);
// Without the source text unless `with_source`.
nlohmann::json ToJson(const NodeRecord& node, bool with_source);

// A measurement for people: outcome, speedup and a row per shape.
void PrintMeasurement(std::ostream& out, const Measurement& measurement);

// The end of a run (kestrel run, kestrel resume) on stdout.
// "23.4%" of the roofline; "-" when unknown (0).
std::string FormatRoofline(double fraction);
// The speedup over the task's expert baseline ("0.12x"), "-" without one.
std::string FormatOverBaseline(double speedup, double baseline_speedup);
void PrintRunSummary(const RunSummary& summary, bool json);
// Why a run stopped, in words: kTime -> "the time budget is spent (time)".
std::string StopReasonText(const StopReason& reason);

}  // namespace kestrel::cli
