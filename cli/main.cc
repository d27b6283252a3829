#include <cmath>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "cli/cli.h"
#include "core/duration.h"
#include "search/run_session.h"

namespace kestrel::cli {

std::vector<std::filesystem::path> Cli::TaskDirs() const {
  std::vector<std::filesystem::path> extra(tasks_dirs.begin(), tasks_dirs.end());
  return kestrel::TaskDirs(extra);
}

Result<std::unique_ptr<Store>> Cli::OpenForReading() const {
  if (!std::filesystem::exists(db)) {
    return Fail(Error::NotFound("no database at " + db + " (start a search with `kestrel run`, or pass --db PATH)"));
  }
  return Store::Open(db, Store::Mode::kReadOnly);
}

Result<NodeRecord> NamedNode(Store& store, std::int64_t node_id) {
  auto node = store.GetNode(node_id);
  if (!node && node.error().IsNotFound()) {
    return Fail(Error::InvalidArgument(fmt::format("no node {} in the database", node_id)));
  }
  return node;
}

Result<RunRecord> NamedRun(Store& store, std::int64_t run_id) {
  auto run = store.GetRun(run_id);
  if (!run && run.error().IsNotFound()) {
    return Fail(Error::InvalidArgument(fmt::format("no run {} in the database", run_id)));
  }
  return run;
}

namespace {

CLI::Validator NumberAtLeast(double least, bool inclusive, const std::string& words) {
  return CLI::Validator(
      [least, inclusive, words](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        const bool number = end != text.c_str() && *end == '\0' && std::isfinite(value);
        if (number && (inclusive ? value >= least : value > least)) return std::string();
        return "expected " + words + ", got '" + text + "'";
      },
      inclusive ? "NUMBER>=0" : "NUMBER>0");
}

}  // namespace

CLI::Validator AboveZero() { return NumberAtLeast(0, false, "a number above zero"); }
CLI::Validator ZeroOrMore() { return NumberAtLeast(0, true, "a number, zero or more"); }

CLI::Validator ADuration() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto duration = ParseDuration(text);
        return duration ? std::string() : duration.error().message();
      },
      "DURATION");
}

int Cli::Report(const Error& error) {
  std::cerr << "kestrel: " << error.message() << "\n";
  exit_code = error.IsInvalidArgument() ? kExitUsage : kExitFailure;
  return exit_code;
}

}  // namespace kestrel::cli

int main(int argc, char** argv) {
  using namespace kestrel::cli;
  Cli cli;
  const char* env_db = std::getenv("KESTREL_DB");
  cli.db = env_db && *env_db ? env_db : "kestrel.db";

  CLI::App app{"kestrel: searches the design space of compute kernels for the fastest correct one.", "kestrel"};
  app.require_subcommand(1);
  app.fallthrough();
  app.set_version_flag("--version", "kestrel 0.1.0");
  app.add_option("--db", cli.db, "the database file (default: $KESTREL_DB, else ./kestrel.db)");
  app.add_option("--tasks-dir", cli.tasks_dirs, "a folder of task folders, besides the built-in ones (repeatable)");

  AddRunCommand(app, cli);
  AddTasksCommand(app, cli);
  AddEvalCommand(app, cli);
  AddRunsCommand(app, cli);
  AddBestCommand(app, cli);
  AddShowCommand(app, cli);
  AddLineageCommand(app, cli);
  AddExportCommand(app, cli);
  AddGraphCommand(app, cli);
  AddResumeCommand(app, cli);
  AddStatsCommand(app, cli);
  AddReportCommand(app, cli);
  AddServeCommand(app, cli);
  AddHumanCommands(app, cli);
  AddAddCommand(app, cli);
  AddDoctorCommand(app, cli);
  AddSuiteCommand(app, cli);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? kExitOk : kExitUsage;
  }
  return cli.exit_code;
}
