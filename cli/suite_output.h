#pragma once
// `kestrel suite report` for people: a table per level and a summary line
// per level (docs/SUITE.md defines each figure).

#include <iosfwd>

namespace kestrel {
struct SuiteReport;
}

namespace kestrel::cli {

void PrintSuiteReport(std::ostream& out, const SuiteReport& report);

}  // namespace kestrel::cli
