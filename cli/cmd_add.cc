// kestrel add TASK FILE [--parent NODE] [--knob N=V]... [--eval] [--config FILE]:
// a person's candidate joins the task's graph, under a `human` edge from the
// parent or as a root, with an `add` action naming the file. Without --eval
// a search evaluates it (a run loads nodes whose evaluation has not ended,
// and a running one adopts it when it sees the action); with --eval it is
// evaluated now, as `kestrel eval` evaluates a file, and the result is
// recorded on the node.

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "cli/cli.h"
#include "cli/human_flags.h"
#include "cli/knob_choice.h"
#include "cli/output.h"
#include "cli/session_printer.h"
#include "evaluators/make_evaluator.h"
#include "search/run_session.h"

namespace kestrel::cli {
namespace {

struct AddFlags {
  std::string task;
  std::string file;
  std::int64_t parent = 0;
  std::vector<std::string> knobs;
  std::string config_file;
  std::string author;
  bool eval = false;
};

// Evaluates the node's candidate now and records the result on it.
Status EvaluateNow(Store& store, Evaluator& evaluator, const RunConfig& config, std::int64_t node,
                   const Candidate& candidate) {
  auto host_id = store.UpsertHost(evaluator.Host());
  if (!host_id) return Fail(host_id.error());
  if (auto calibration = EnsureCalibration(store, *host_id, evaluator, config.evaluator.threads,
                                           PrintSessionEvents(std::cerr));
      !calibration) {
    std::cerr << "kestrel: no calibration (" << calibration.error().message() << "); roofline checks are off\n";
  }
  const Measurement measurement = evaluator.Evaluate(candidate);
  auto recorded = store.RecordMeasurement(node, 0, *host_id, measurement);
  if (!recorded) return Fail(recorded.error());
  PrintMeasurement(std::cout, measurement);
  return {};
}

void Add(Cli& cli, const AddFlags& flags) {
  auto task = FindTask(flags.task, cli.TaskDirs(), &std::cerr);
  if (!task) return (void)cli.Report(task.error().IsNotFound() ? Error::InvalidArgument(task.error().message()) : task.error());
  std::ifstream in(flags.file);
  std::stringstream text;
  text << in.rdbuf();
  auto knobs = ChooseKnobs(text.str(), flags.knobs, false);
  if (!knobs) return (void)cli.Report(knobs.error().WithContext(flags.file));
  RunConfig config;
  if (!flags.config_file.empty()) {
    auto loaded = LoadRunConfig(flags.config_file);
    if (!loaded) return (void)cli.Report(loaded.error());
    config = *loaded;
    if (!config.task.empty() && config.task != task->name) {
      return (void)cli.Report(Error::InvalidArgument(fmt::format(
          "--config {}: it is a config of task {}, not of {} (its evaluator's toolchain and flags make the node's "
          "identity)",
          flags.config_file, config.task, task->name)));
    }
  }
  // The toolchain and flags a search of this config builds with: the
  // candidate's identity holds them, so a run finds the node as its own.
  auto evaluator = MakeEvaluator(*task, config.evaluator, config.seed, {}, config.executor);
  if (!evaluator) return (void)cli.Report(evaluator.error());
  const Candidate candidate{text.str(), knobs->front(), (*evaluator)->Toolchain(), (*evaluator)->Flags()};

  auto store = Store::Open(cli.db);
  if (!store) return (void)cli.Report(store.error());
  auto task_id = (*store)->UpsertTask(*task);
  if (!task_id) return (void)cli.Report(task_id.error());
  // The graph a run of the task as it is now searches (Task::Definition).
  auto graph_id = (*store)->GraphForTask(*task_id, false, task->Definition());
  if (!graph_id) return (void)cli.Report(graph_id.error());
  if (flags.parent != 0) {
    auto parent = NamedNode(**store, flags.parent);
    if (!parent) return (void)cli.Report(parent.error());
    if (parent->graph_id != *graph_id) {
      return (void)cli.Report(Error::InvalidArgument(
          fmt::format("--parent {}: the node is not in task {}'s graph {}", flags.parent, task->name, *graph_id)));
    }
  }
  auto known = (*store)->FindNode(*graph_id, candidate.Identity());
  if (!known) return (void)cli.Report(known.error());
  if (*known) {
    return (void)cli.Report(Error::InvalidArgument(
        fmt::format("{}: this candidate is node {} of the graph already", flags.file, **known)));
  }
  const std::string author = Author(flags.author);
  const std::string mutation = "human:" + author + ":" + std::filesystem::path(flags.file).filename().string();
  std::int64_t node = 0;
  auto added = (*store)->Atomically([&]() -> Status {
    std::optional<EdgeRecord> edge;
    if (flags.parent != 0) edge = EdgeRecord{flags.parent, 0, EdgeKind::kHuman, 0, mutation, 0};
    auto id = (*store)->AddNode(NewNodeRecord(candidate, *graph_id, 0, mutation), edge);
    if (!id) return Fail(id.error());
    node = *id;
    auto action = (*store)->AddHumanAction({0, *graph_id, node, 0, HumanActionKind::kAdd, flags.file, author, 0});
    if (!action) return Fail(action.error());
    return {};
  });
  if (!added) return (void)cli.Report(added.error());
  std::cout << fmt::format("node {}: added to task {}'s graph {}{}\n", node, task->name, *graph_id,
                           flags.parent != 0 ? fmt::format(" under node {}", flags.parent) : " as a root");
  if (flags.eval) {
    if (auto done = EvaluateNow(**store, **evaluator, config, node, candidate); !done) {
      return (void)cli.Report(done.error());
    }
  } else {
    std::cout << "a search of the task evaluates it (kestrel run, or a running one)\n";
  }
  cli.exit_code = kExitOk;
}

}  // namespace

void AddAddCommand(CLI::App& app, Cli& cli) {
  auto flags = std::make_shared<AddFlags>();
  CLI::App* add = app.add_subcommand("add", "a person's candidate joins a task's graph (under a parent, or as a root)");
  add->add_option("task", flags->task, "the task's name")->required();
  add->add_option("file", flags->file, "the kernel source file")->required()->check(CLI::ExistingFile);
  add->add_option("--parent", flags->parent, "the node it derives from (a `human` edge)")->check(AboveZero());
  add->add_option("--knob", flags->knobs, "NAME=VALUE for a knob the file declares (default: its first value)");
  add->add_option("--config", flags->config_file, "the run config whose evaluator builds it (its toolchain and flags)");
  add->add_flag("--eval", flags->eval, "evaluate it now (as `kestrel eval`) and record the result on the node");
  AddAuthorFlag(*add, flags->author);
  add->callback([flags, &cli] { Add(cli, *flags); });
}

}  // namespace kestrel::cli
