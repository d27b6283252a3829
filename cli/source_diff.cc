#include "cli/source_diff.h"

#include <sstream>
#include <vector>

#include <dtl/dtl.hpp>

namespace kestrel::cli {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

std::string UnifiedDiff(const std::string& before, const std::string& after, const std::string& before_name,
                        const std::string& after_name) {
  if (before == after) return "";
  dtl::Diff<std::string, std::vector<std::string>> diff(Lines(before), Lines(after));
  diff.compose();
  diff.composeUnifiedHunks();
  std::ostringstream out;
  out << "--- " << before_name << "\n+++ " << after_name << "\n";
  diff.printUnifiedFormat(out);
  return out.str();
}

}  // namespace kestrel::cli
