// kestrel tasks [--json]: the tasks found (built-in plus --tasks-dir). A
// broken task is listed with its error beside the healthy ones, and the
// command then exits 2: the listing is also how a user checks a folder.

#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "core/candidate.h"
#include "cli/cli.h"
#include "cli/knob_choice.h"
#include "cli/output.h"
#include "core/json_text.h"

namespace kestrel::cli {
namespace {

// Configurations of the knob space of a source: the product of value
// counts (LoadTask refused a seed whose declarations cannot be read).
double KnobSpace(const std::string& source) {
  auto knobs = ParseKnobs(source);
  return knobs ? KnobSpaceOf(*knobs) : 0;
}

}  // namespace

void AddTasksCommand(CLI::App& app, Cli& cli) {
  auto json = std::make_shared<bool>(false);
  CLI::App* tasks = app.add_subcommand(
      "tasks", "list the tasks found (built-in configs/tasks plus --tasks-dir, whose tasks shadow built-in ones of "
               "the same name); a broken task is listed with its error and the exit code is 2");
  tasks->add_flag("--json", *json, "print one JSON document");
  tasks->callback([json, &cli] {
    auto listed = ListTasks(cli.TaskDirs());
    if (!listed) return (void)cli.Report(listed.error());
    nlohmann::json list = nlohmann::json::array();
    Table table({"task", "language", "shapes", "knob configs", "description"});
    const Error* broken = nullptr;
    for (const ListedTask& entry : *listed) {
      if (entry.folder.shadowed) std::cerr << "kestrel: " << ShadowNote(entry.folder) << "\n";
      if (!entry.task) {
        broken = broken ? broken : &entry.task.error();
        list.push_back({{"name", entry.folder.name}, {"dir", entry.folder.dir.string()}, {"error", entry.task.error().message()}});
        table.Add({entry.folder.name, "-", "-", "-", "broken: " + entry.task.error().message()});
        continue;
      }
      const Task& task = *entry.task;
      double space = 0;
      for (const auto& seed : task.seeds) space += KnobSpace(seed.text);
      list.push_back({{"name", task.name},
                      {"language", task.language},
                      {"description", task.description},
                      {"signature", task.Signature()},
                      {"shapes", task.shapes},
                      {"check_shapes", task.check_shapes},
                      {"knob_configurations", space < 9e15 ? nlohmann::json(static_cast<std::int64_t>(space))
                                                           : nlohmann::json(space)},
                      {"dir", task.dir.string()}});
      table.Add({task.name, task.language, std::to_string(task.shapes.size()), KnobSpaceSize(space), task.description});
    }
    if (*json) {
      std::cout << JsonText(list, 2) << "\n";
    } else {
      table.Print(std::cout);
    }
    if (broken) cli.exit_code = broken->IsInvalidArgument() ? kExitUsage : kExitFailure;
  });
}

}  // namespace kestrel::cli
