// kestrel suite run [--level L] [--tasks A,B] [--time-per-task D | --evals-per-task N] [RUN.json]
// kestrel suite resume [--suite ID]
// kestrel suite report [--suite ID] [--json]
// A benchmark suite (docs/SUITE.md): one run per task with the same config,
// recorded in the database so that an interrupted suite resumes.

#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/output.h"
#include "cli/suite_output.h"
#include "core/json_text.h"
#include "search/engine/budget.h"
#include "core/stop.h"
#include "search/suite/suite_report.h"
#include "search/suite/suite_runner.h"

namespace kestrel::cli {
namespace {

struct SuiteFlags {
  std::string config_file;
  std::vector<int> levels;
  std::vector<std::string> tasks;
  std::string time_per_task;
  std::int64_t evals_per_task = 0;
  double min_time = -1;
  std::int64_t suite = 0;
  bool json = false;
  ProgressFlags progress;
};

Result<RunConfig> BuildConfig(const SuiteFlags& flags) {
  RunConfig config;
  std::string origin = "command line";
  if (!flags.config_file.empty()) {
    auto loaded = LoadRunConfig(flags.config_file);
    if (!loaded) return Fail(loaded.error());
    config = *loaded;
    origin = flags.config_file;
  }
  if (!flags.time_per_task.empty()) {
    auto duration = ParseDuration(flags.time_per_task);
    if (!duration) return Fail(duration.error().WithContext("--time-per-task"));
    config.budget.time = *duration;
    config.budget.evaluations.reset();
  }
  if (flags.evals_per_task > 0) {
    config.budget.evaluations = flags.evals_per_task;
    config.budget.time.reset();
  }
  if (flags.min_time >= 0) config.evaluator.measure.min_time_s = flags.min_time;
  config.budget = WithDefaultTime(config.budget);
  // Validated as a run of some task would be; each task's name goes in later.
  RunConfig checked = config;
  checked.task = "suite";
  if (auto status = Validate(checked, origin); !status) return Fail(status.error());
  return config;
}

// Progress of the suite itself on stderr: a line as each task starts and ends.
SuiteOptions MakeSuiteOptions(const Cli& cli, const SuiteFlags& flags) {
  SuiteOptions options;
  options.search.db_path = cli.db;
  options.search.task_dirs.assign(cli.tasks_dirs.begin(), cli.tasks_dirs.end());
  ApplyProgressFlags(flags.progress, options.search);
  if (flags.progress.quiet) return options;
  options.task_started = [](const SuiteTaskRecord& task, std::size_t count) {
    std::cerr << fmt::format("suite: [{}/{}] {} (level {}){}\n", task.position + 1, count, task.task, task.level,
                             task.run_id > 0 ? fmt::format(", resuming run {}", task.run_id) : "");
  };
  options.task_ended = [](const SuiteTaskRecord& task) {
    std::cerr << fmt::format("suite: {} {}{}\n", task.task, ToString(task.state),
                             task.reason.empty() ? "" : ": " + task.reason);
  };
  return options;
}

void Finish(Cli& cli, const Result<SuiteOutcome>& outcome) {
  if (!outcome) return (void)cli.Report(outcome.error());
  int done = 0, failed = 0, skipped = 0;
  for (const SuiteTaskRecord& task : outcome->tasks) {
    done += task.state == SuiteTaskState::kDone;
    failed += task.state == SuiteTaskState::kFailed;
    skipped += task.state == SuiteTaskState::kSkipped;
  }
  std::cout << fmt::format("suite {}: {} of {} tasks done, {} failed, {} skipped{}\n", outcome->suite_id, done,
                           outcome->tasks.size(), failed, skipped,
                           outcome->interrupted ? " (interrupted: kestrel suite resume goes on)" : "");
  std::cout << fmt::format("kestrel suite report --suite {} shows the results\n", outcome->suite_id);
  cli.exit_code = outcome->interrupted ? kExitInterrupted : kExitOk;
}

void AddSuiteRun(CLI::App& suite, Cli& cli) {
  auto flags = std::make_shared<SuiteFlags>();
  CLI::App* run = suite.add_subcommand("run", "run a search on each task of a suite, one after the other");
  run->add_option("config", flags->config_file, "a run config (JSON) every task runs with; its task is ignored");
  run->add_option("--level", flags->levels, "the tasks of this level (1, 2 or 3; repeatable)")
      ->check(CLI::Range(1, 3));
  run->add_option("--tasks", flags->tasks, "these tasks (comma-separated)")->delimiter(',');
  auto* time = run->add_option("--time-per-task", flags->time_per_task, "each task's time budget: 90s, 3m, 1h")->check(ADuration());
  run->add_option("--evals-per-task", flags->evals_per_task, "each task's evaluation budget")
      ->check(AboveZero())
      ->excludes(time);
  run->add_option("--min-time", flags->min_time, "seconds of timing per shape and kernel (default 0.5)")
      ->check(ZeroOrMore());
  AddProgressFlags(*run, flags->progress);
  run->callback([flags, &cli] {
    auto config = BuildConfig(*flags);
    if (!config) return (void)cli.Report(config.error());
    SuiteSelection selection{flags->levels, flags->tasks};
    InstallStopHandlers();
    Finish(cli, RunSuite(*config, selection, MakeSuiteOptions(cli, *flags)));
  });
}

void AddSuiteResume(CLI::App& suite, Cli& cli) {
  auto flags = std::make_shared<SuiteFlags>();
  CLI::App* resume = suite.add_subcommand("resume", "continue an interrupted suite (default: the newest)");
  resume->add_option("--suite", flags->suite, "the suite to continue")->check(AboveZero());
  AddProgressFlags(*resume, flags->progress);
  resume->callback([flags, &cli] {
    if (!std::filesystem::exists(cli.db)) {
      return (void)cli.Report(Error::NotFound("no database at " + cli.db + " (nothing to resume)"));
    }
    InstallStopHandlers();
    const std::optional<std::int64_t> id = flags->suite > 0 ? std::optional<std::int64_t>(flags->suite) : std::nullopt;
    Finish(cli, ResumeSuite(id, MakeSuiteOptions(cli, *flags)));
  });
}

void AddSuiteReport(CLI::App& suite, Cli& cli) {
  auto flags = std::make_shared<SuiteFlags>();
  CLI::App* report = suite.add_subcommand("report", "a suite's results per task and per level (default: the newest)");
  report->add_option("--suite", flags->suite, "the suite to report")->check(AboveZero());
  report->add_flag("--json", flags->json, "one JSON document");
  report->callback([flags, &cli] {
    auto store = cli.OpenForReading();
    if (!store) return (void)cli.Report(store.error());
    std::int64_t id = flags->suite;
    if (id == 0) {
      auto latest = (*store)->LatestSuite();
      if (!latest) return (void)cli.Report(latest.error());
      if (!*latest) return (void)cli.Report(Error::NotFound("no suite in " + cli.db + " (start one with `kestrel suite run`)"));
      id = (*latest)->id;
    } else if (auto named = (*store)->GetSuite(id); !named && named.error().IsNotFound()) {
      return (void)cli.Report(Error::InvalidArgument(fmt::format("--suite {}: no suite {} in the database", id, id)));
    }
    auto built = BuildSuiteReport(**store, id);
    if (!built) return (void)cli.Report(built.error());
    if (flags->json) {
      std::cout << JsonText(ToJson(*built), 2) << "\n";
    } else {
      PrintSuiteReport(std::cout, *built);
    }
  });
}

}  // namespace

void AddSuiteCommand(CLI::App& app, Cli& cli) {
  CLI::App* suite = app.add_subcommand("suite", "benchmark suites: run, resume and report (docs/SUITE.md)");
  suite->require_subcommand(1);
  AddSuiteRun(*suite, cli);
  AddSuiteResume(*suite, cli);
  AddSuiteReport(*suite, cli);
}

}  // namespace kestrel::cli
