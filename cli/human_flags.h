#pragma once
// What the commands a person uses to act on a graph share (cmd_human.cc,
// cmd_add.cc): who acts (--as, else $USER) and the database they write; and
// what every command that names a node or a run shares: the lookup.

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
// The node or run a command names, or InvalidArgument (exit 2) naming it
// when the database has none: an id that names nothing is bad usage.
Result<NodeRecord> NamedNode(Store& store, std::int64_t node_id);
Result<RunRecord> NamedRun(Store& store, std::int64_t run_id);

}  // namespace kestrel::cli
