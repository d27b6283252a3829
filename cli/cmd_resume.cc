// kestrel resume [--run ID] [--time D] [--max-evals N] [--retry] [--review]: continue an
// interrupted or finished run with its saved config; --time and --max-evals
// extend its budget. A run that stopped with an error is refused (saying why)
// unless --retry.

#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "cli/output.h"
#include "cli/review_flags.h"
#include "search/run_session.h"
#include "core/stop.h"

namespace kestrel::cli {
namespace {

struct ResumeFlags {
  std::int64_t run = 0;
  std::string time;
  std::int64_t max_evals = 0;
  bool retry = false;
  ProgressFlags progress;
  bool json = false;
  ReviewFlags review;
};

}  // namespace

void AddResumeCommand(CLI::App& app, Cli& cli) {
  auto flags = std::make_shared<ResumeFlags>();
  CLI::App* resume = app.add_subcommand("resume", "continue a run (default: the newest unfinished one)");
  resume->add_option("--run", flags->run, "the run to continue")->check(AboveZero());
  resume->add_option("--time", flags->time, "extend the time budget by this much: 90s, 10m, 8h, 1h30m")->check(ADuration());
  resume->add_option("--max-evals", flags->max_evals, "extend the evaluation budget by N")->check(AboveZero());
  resume->add_flag("--retry", flags->retry,
                   "continue a run that stopped with an error (once a Kestrel with the fix is installed)");
  AddProgressFlags(*resume, flags->progress);
  resume->add_flag("--json", flags->json, "print the run's summary as JSON");
  AddReviewFlags(*resume, flags->review);
  resume->callback([flags, &cli] {
    auto reviewer = MakeReviewer(flags->review);
    if (!reviewer) return (void)cli.Report(reviewer.error());
    ResumeOptions resume_options;
    if (flags->run > 0) resume_options.run_id = flags->run;
    if (flags->max_evals > 0) resume_options.extra_evaluations = flags->max_evals;
    resume_options.retry = flags->retry;
    if (!flags->time.empty()) {
      auto duration = ParseDuration(flags->time);
      if (!duration) return (void)cli.Report(duration.error().WithContext("--time"));
      resume_options.extra_time = *duration;
    }
    SearchOptions options;
    options.db_path = cli.db;
    options.task_dirs.assign(cli.tasks_dirs.begin(), cli.tasks_dirs.end());
    ApplyProgressFlags(flags->progress, options);
    if (*reviewer) {
      options.reviewer = std::move(*reviewer);
      // A live status line would redraw over the question.
      if (options.progress_mode == ProgressMode::kLive) options.progress_mode = ProgressMode::kEachResult;
    }
    if (!std::filesystem::exists(cli.db)) {
      return (void)cli.Report(Error::NotFound("no database at " + cli.db + " (nothing to resume)"));
    }
    InstallStopHandlers();
    auto summary = ResumeSearch(resume_options, options);
    if (!summary) return (void)cli.Report(summary.error());
    PrintRunSummary(*summary, flags->json);
    cli.exit_code = summary->interrupted ? kExitInterrupted : kExitOk;
  });
}

}  // namespace kestrel::cli
