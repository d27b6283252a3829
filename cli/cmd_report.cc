// kestrel report [--task T] [--run ID] [--top N] -o FILE.html: one
// self-contained HTML report of a search graph (report/).

#include <fstream>
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "report/report_model.h"
#include "report/report_page.h"

namespace kestrel::cli {
namespace {

struct ReportFlags {
  std::string task;
  std::int64_t run = 0;
  int top = 10;
  std::string output;
};

}  // namespace

void AddReportCommand(CLI::App& app, Cli& cli) {
  auto flags = std::make_shared<ReportFlags>();
  CLI::App* report = app.add_subcommand("report", "one self-contained HTML report: runs, progress, roofline, graph, nodes");
  report->add_option("--task", flags->task, "the graph of this task's newest run, with all its runs");
  report->add_option("--run", flags->run, "only this run (default: the newest run's graph)")->check(AboveZero());
  report->add_option("--top", flags->top, "top candidates listed (default 10)")->check(AboveZero());
  report->add_option("-o,--output", flags->output, "the HTML file to write, - for standard output")->required();
  report->callback([flags, &cli] {
    auto store = cli.OpenForReading();
    if (!store) return (void)cli.Report(store.error());
    ReportScope scope;
    if (!flags->task.empty()) scope.task = flags->task;
    if (flags->run > 0) scope.run_id = flags->run;
    auto model = LoadReport(**store, scope, flags->top);
    if (!model) return (void)cli.Report(model.error());
    const std::string html = report::ReportHtml(*model);
    if (flags->output == "-") {
      std::cout << html;
      return;
    }
    std::ofstream out(flags->output, std::ios::binary);
    out << html;
    if (!out.flush()) return (void)cli.Report(Error::Io("cannot write " + flags->output));
    std::cerr << "kestrel: wrote " << flags->output << " (" << model->nodes.size() << " nodes, "
              << model->progress.size() << " evaluations)\n";
  });
}

}  // namespace kestrel::cli
