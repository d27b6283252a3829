#pragma once
// Private to core/: parsing and validation of a task.json document
// (CONTRACT.md, "Tasks"), apart from the file system. LoadTask (task.cc)
// reads the file, calls this, then checks and reads the sources it names.

#include <string>
#include <string_view>

#include "core/error.h"
#include "core/task.h"

namespace kestrel {

// Parses `text`, the content of `file` (used in messages only), found in a
// folder called `folder_name`. Every field is validated; on success the
// Task's reference/seeds/baseline carry their file names (no text yet) and
// spec_text holds `text`; `dir` is left empty. On failure: InvalidArgument
// "FILE: FIELD: expected ..., got ...", FIELD a JSON path like args[2].shape.
Result<Task> ParseTaskSpec(std::string_view text, const std::string& file, const std::string& folder_name);

// True for a C identifier that is not a C++ keyword.
bool IsCppIdentifier(std::string_view name);

}  // namespace kestrel
