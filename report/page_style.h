#pragma once
// The report's inline stylesheet and scripts (report_page.cc).

namespace kestrel::report {

// Screen and print rules.
extern const char kPageCss[];
// Opens every <details> before printing, so that a printout holds everything.
extern const char kPrintScript[];
// The live page: polls the version URL (meta kestrel-version-url) and, when
// the JSON differs from meta kestrel-version, fetches the page again and
// swaps its body in, keeping the reader's place.
extern const char kLiveScript[];

}  // namespace kestrel::report
