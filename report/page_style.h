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
// The live page's writes: kestrelAct(button, verb[, "undo"]) posts a note,
// a label, a ban or a pin of the button's node with the token and author
// typed at the top; the page then follows the change like any other.
extern const char kActScript[];

}  // namespace kestrel::report
