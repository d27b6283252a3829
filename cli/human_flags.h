#pragma once
// What the commands a person uses to act on a graph share (cmd_human.cc,
// cmd_add.cc): who acts (--as, else $USER) and the database they write.

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "core/error.h"
#include "store/store.h"

namespace kestrel::cli {

struct Cli;

// Adds --as NAME to `command`, into `author`.
void AddAuthorFlag(CLI::App& command, std::string& author);
// `author` when given, else $USER, else "unknown".
std::string Author(const std::string& author);
// Opens the database read-write; a missing file is InvalidArgument (exit 2):
// a person acts on a graph a search made.
Result<std::unique_ptr<Store>> OpenForActing(const Cli& cli);

}  // namespace kestrel::cli
