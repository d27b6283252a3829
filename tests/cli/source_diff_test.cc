// UnifiedDiff: what `kestrel lineage --diff` prints for a step that changed
// the source.

#include "cli/source_diff.h"

#include <doctest.h>

#include <string>

namespace kestrel::cli {
namespace {

TEST_SUITE("source_diff") {
  TEST_CASE("the same text: no diff") { CHECK(UnifiedDiff("a\nb\n", "a\nb\n", "node 1", "node 2").empty()); }

  TEST_CASE("a changed line, with its context, under the two nodes' names") {
    const std::string before = "l1\nl2\nl3\nl4\nfor (i = 0; i < n; ++i) y[i] = x[i];\nl6\nl7\nl8\nl9\nl10\n";
    const std::string after = "l1\nl2\nl3\nl4\n#pragma omp simd\nfor (i = 0; i < n; ++i) y[i] = x[i];\nl6\nl7\nl8\nl9\n";
    const std::string diff = UnifiedDiff(before, after, "node 3", "node 7");
    CHECK(diff.rfind("--- node 3\n+++ node 7\n", 0) == 0);
    CHECK(diff.find("+#pragma omp simd\n") != std::string::npos);
    CHECK(diff.find("-l10\n") != std::string::npos);
    CHECK(diff.find(" l4\n") != std::string::npos);  // context
    CHECK(diff.find("l1\n") == std::string::npos);    // beyond three lines of context
    CHECK(diff.find("@@ -2,6 +2,7 @@\n") != std::string::npos);
    CHECK(diff.find("@@ -8,3 +9,2 @@\n") != std::string::npos);
  }
}

}  // namespace
}  // namespace kestrel::cli
