#pragma once
// The report's charts as inline SVG, written from the model's numbers (no
// plotting library, no network): progress over evaluations and over time
// (single measurements as dots, the best so far as a step line, confirmed
// medians as diamonds), outcomes over time, and the host's roofline with
// every measured node as a point. Each point links to its node's page.

#include <string>
#include <string_view>

namespace kestrel {
struct ReportModel;
}

namespace kestrel::report {

std::string ProgressByEvaluationSvg(const ReportModel& model);
std::string ProgressByTimeSvg(const ReportModel& model);
std::string OutcomesOverTimeSvg(const ReportModel& model);
// A note instead of a chart when the host was never calibrated.
std::string RooflineSvg(const ReportModel& model);

// The colour of an outcome's word ("measured", "wrong", ...), shared with the graph.
const char* OutcomeColour(std::string_view outcome);

}  // namespace kestrel::report
