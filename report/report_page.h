#pragma once
// The report as one self-contained HTML page: inline CSS (with a print
// stylesheet), inline SVG charts and graph, no external resource, so it opens
// from a mail attachment. `kestrel serve` writes the same page with a live
// script and a list of runs above it.

#include <string>

namespace kestrel {
struct ReportModel;
}

namespace kestrel::report {

struct PageOptions {
  // Poll this URL (a JSON document) every 2 s and reload the page's body when
  // it changes; "" for a static report.
  std::string version_url;
  std::string version;       // the JSON of the version shown
  std::string preface_html;  // trusted HTML above the report (the live page's run list)
};

std::string ReportHtml(const ReportModel& model, const PageOptions& options = {});
// The page of a database without runs yet, saying so (live when `options` is).
std::string NoRunsHtml(const PageOptions& options);

}  // namespace kestrel::report
