// kestrel graph [--run ID | --task NAME] [--format dot|svg] [-o FILE]:
// the search graph for Graphviz.

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/cli.h"
#include "report/graph_svg.h"
#include "search/engine/graph_loader.h"

namespace kestrel::cli {
namespace {

struct GraphFlags {
  std::int64_t run = 0;
  std::string task;
  std::string format = "dot";
  std::string output;
};

// The run whose graph to draw: the given one, or the newest (of the task).
Result<RunRecord> ChooseRun(Store& store, const GraphFlags& flags) {
  if (flags.run > 0) return NamedRun(store, flags.run);
  auto runs = store.ListRuns();
  if (!runs) return Fail(runs.error());
  for (const RunRecord& run : *runs) {
    if (flags.task.empty() || run.task_name == flags.task) return run;
  }
  return Fail(Error::NotFound(flags.task.empty() ? "the database has no runs" : "no run of task " + flags.task));
}

// Graphviz draws it; the file is written here, so that no shell ever sees
// its name, and a file that cannot be written is not blamed on Graphviz.
Status WriteSvg(const std::string& dot, const std::string& output) {
  const std::string svg = report::DotToSvg(dot);
  if (svg.empty()) {
    return Fail(Error::Unsupported("Graphviz's dot failed or is missing (apt-get install graphviz), or use --format dot"));
  }
  const std::string file = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n" + svg;
  if (output.empty()) {
    std::cout << file;
    return {};
  }
  std::ofstream out(output);
  out << file;
  if (!out.flush()) return Fail(Error::Io("cannot write " + output));
  return {};
}

}  // namespace

void AddGraphCommand(CLI::App& app, Cli& cli) {
  auto flags = std::make_shared<GraphFlags>();
  CLI::App* graph = app.add_subcommand("graph", "the search graph for Graphviz (DOT or SVG)");
  graph->add_option("--run", flags->run, "the graph of this run (default: the newest run)")->check(AboveZero());
  graph->add_option("--task", flags->task, "the graph of this task's newest run");
  graph->add_option("--format", flags->format, "dot (default) or svg")->check(CLI::IsMember({"dot", "svg"}));
  graph->add_option("-o,--output", flags->output, "the file to write (default: standard output)");
  graph->callback([flags, &cli] {
    auto store = cli.OpenForReading();
    if (!store) return (void)cli.Report(store.error());
    auto run = ChooseRun(**store, *flags);
    if (!run) return (void)cli.Report(run.error());
    auto loaded = LoadSearchGraph(**store, run->graph_id);
    if (!loaded) return (void)cli.Report(loaded.error());
    std::ostringstream dot;
    loaded->graph.WriteDot(dot, run->task_name + " (graph " + std::to_string(run->graph_id) + ")");
    if (flags->format == "svg") {
      if (auto status = WriteSvg(dot.str(), flags->output); !status) return (void)cli.Report(status.error());
      return;
    }
    if (flags->output.empty()) {
      std::cout << dot.str();
      return;
    }
    std::ofstream out(flags->output);
    out << dot.str();
    if (!out.flush()) return (void)cli.Report(Error::Io("cannot write " + flags->output));
  });
}

}  // namespace kestrel::cli
