#pragma once
// The difference between two kernel sources as a unified diff (dtl's
// shortest edit script: Debian's libdtl-dev), for `kestrel lineage --diff`.

#include <string>

namespace kestrel::cli {

// "--- BEFORE_NAME\n+++ AFTER_NAME\n" and the hunks with three lines of
// context; empty when the two are the same text.
std::string UnifiedDiff(const std::string& before, const std::string& after, const std::string& before_name,
                        const std::string& after_name);

}  // namespace kestrel::cli
