#pragma once
// The `kestrel` command: argument parsing and printing only. Each subcommand
// lives in its own cmd_*.cc and registers itself on the CLI11 app; its
// callback leaves the process exit code in Cli::exit_code.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/error.h"
#include "store/store.h"

namespace kestrel {
struct SearchOptions;
}

namespace kestrel::cli {

// Numbers on the command line, refused in plain words: CLI::PositiveNumber
// and NonNegativeNumber print their range up to DBL_MAX in 300 digits.
CLI::Validator AboveZero();
CLI::Validator ZeroOrMore();
// A duration as ParseDuration reads it ("90s", "1h30m"); an empty one is
// refused, not taken for no flag.
CLI::Validator ADuration();


// Options every subcommand shares.
struct Cli {
  std::string db;                        // --db, default $KESTREL_DB or ./kestrel.db
  std::vector<std::string> tasks_dirs;   // --tasks-dir, repeatable
  int exit_code = 0;

  std::vector<std::filesystem::path> TaskDirs() const;
  // Opens the database for reading; a missing file is a clear NotFound.
  Result<std::unique_ptr<Store>> OpenForReading() const;
  // Prints "kestrel: <message>" on stderr; returns the exit code for it
  // (2 for a user's mistake, 1 otherwise) and stores it in exit_code.
  int Report(const Error& error);
};

// The node or run a command names, or InvalidArgument (exit 2) naming it
// when the database has none: an id that names nothing is bad usage.
Result<NodeRecord> NamedNode(Store& store, std::int64_t node_id);
Result<RunRecord> NamedRun(Store& store, std::int64_t run_id);

// How run and resume report progress on stderr: a live status line on a
// terminal, a status line every --log-interval seconds otherwise, a line per
// result with --each, nothing with --quiet.
struct ProgressFlags {
  bool quiet = false;
  bool each = false;
  double log_interval = 10.0;
};
void AddProgressFlags(CLI::App& command, ProgressFlags& flags);
// Sets options.progress, progress_mode and log_interval_s from the flags.
void ApplyProgressFlags(const ProgressFlags& flags, SearchOptions& options);
// Sets options.progress, progress_mode and log_interval_s from the flags.

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInterrupted = 130;

void AddRunCommand(CLI::App& app, Cli& cli);
void AddTasksCommand(CLI::App& app, Cli& cli);
void AddEvalCommand(CLI::App& app, Cli& cli);
void AddRunsCommand(CLI::App& app, Cli& cli);
void AddBestCommand(CLI::App& app, Cli& cli);
void AddShowCommand(CLI::App& app, Cli& cli);
void AddLineageCommand(CLI::App& app, Cli& cli);
void AddExportCommand(CLI::App& app, Cli& cli);
void AddGraphCommand(CLI::App& app, Cli& cli);
void AddDoctorCommand(CLI::App& app, Cli& cli);
void AddResumeCommand(CLI::App& app, Cli& cli);
void AddStatsCommand(CLI::App& app, Cli& cli);
void AddReportCommand(CLI::App& app, Cli& cli);
void AddServeCommand(CLI::App& app, Cli& cli);
// note, label, steer, ban, pin (cmd_human.cc)
void AddHumanCommands(CLI::App& app, Cli& cli);
void AddAddCommand(CLI::App& app, Cli& cli);
// suite run, resume, report (cmd_suite.cc)
void AddSuiteCommand(CLI::App& app, Cli& cli);

}  // namespace kestrel::cli
