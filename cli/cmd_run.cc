// kestrel run [RUN.json] [--task NAME] [--time D] [--strategy S] [--max-evals N] ...
// Flags given with a config file override the file's values.

#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include "cli/cli.h"
#include "cli/human_flags.h"
#include "cli/review_flags.h"
#include "cli/output.h"
#include "search/engine/budget.h"
#include "search/run_session.h"
#include "core/stop.h"

namespace kestrel::cli {
namespace {

struct RunFlags {
  std::string config_file;
  std::string task;
  std::string time;
  std::string strategy;
  std::int64_t max_evals = 0;
  std::int64_t plateau = 0;
  std::int64_t seed = -1;
  double min_time = -1;
  bool fresh = false;
  ProgressFlags progress;
  bool json = false;
  ReviewFlags review;
};

Result<RunConfig> BuildConfig(const RunFlags& flags) {
  RunConfig config;
  std::string origin = "command line";
  if (!flags.config_file.empty()) {
    auto loaded = LoadRunConfig(flags.config_file);
    if (!loaded) return Fail(loaded.error());
    config = *loaded;
    origin = flags.config_file;
  }
  if (!flags.task.empty()) config.task = flags.task;
  if (!flags.time.empty()) {
    auto duration = ParseDuration(flags.time);
    if (!duration) return Fail(duration.error().WithContext("--time"));
    config.budget.time = *duration;
  }
  if (!flags.strategy.empty()) config.strategy.name = flags.strategy;
  if (flags.max_evals > 0) config.budget.evaluations = flags.max_evals;
  if (flags.plateau > 0) config.budget.plateau = flags.plateau;
  if (flags.seed >= 0) config.seed = static_cast<std::uint64_t>(flags.seed);
  if (flags.min_time >= 0) config.evaluator.measure.min_time_s = flags.min_time;
  config.budget = WithDefaultTime(config.budget);
  if (auto status = Validate(config, origin); !status) return Fail(status.error());
  return config;
}

}  // namespace

void AddRunCommand(CLI::App& app, Cli& cli) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* run = app.add_subcommand("run", "start a search from a run config and/or flags");
  run->add_option("config", flags->config_file, "a run config (JSON); flags override its values");
  run->add_option("--task", flags->task, "the task to search");
  run->add_option("--time", flags->time, "wall-time budget: 90s, 10m, 8h, 1h30m (default 10m without other budget)")->check(ADuration());
  run->add_option("--strategy", flags->strategy, "model (default), portfolio, graph-ucb, beam, greedy, islands or random");
  run->add_option("--max-evals", flags->max_evals, "evaluation budget")->check(AboveZero());
  run->add_option("--plateau", flags->plateau, "stop after N evaluations without a new best")->check(AboveZero());
  run->add_option("--seed", flags->seed, "seed of the search's random choices and of the inputs")->check(ZeroOrMore());
  run->add_option("--min-time", flags->min_time, "seconds of timing per shape and kernel (default 0.5)")->check(ZeroOrMore());
  run->add_flag("--fresh", flags->fresh, "start a separate graph instead of continuing the task's graph");
  AddProgressFlags(*run, flags->progress);
  run->add_flag("--json", flags->json, "print the run's summary as JSON");
  AddReviewFlags(*run, flags->review);
  run->callback([flags, &cli] {
    auto reviewer = MakeReviewer(flags->review);
    if (!reviewer) return (void)cli.Report(reviewer.error());
    auto config = BuildConfig(*flags);
    if (!config) return (void)cli.Report(config.error());
    SearchOptions options;
    options.db_path = cli.db;
    options.task_dirs.assign(cli.tasks_dirs.begin(), cli.tasks_dirs.end());
    options.fresh = flags->fresh;
    ApplyProgressFlags(flags->progress, options);
    if (*reviewer) {
      options.reviewer = std::move(*reviewer);
      // A live status line would redraw over the question.
      if (options.progress_mode == ProgressMode::kLive) options.progress_mode = ProgressMode::kEachResult;
    }
    InstallStopHandlers();
    auto summary = RunSearch(*config, options);
    if (!summary) return (void)cli.Report(summary.error());
    PrintRunSummary(*summary, flags->json);
    cli.exit_code = summary->interrupted ? kExitInterrupted : kExitOk;
  });
}

}  // namespace kestrel::cli
