// kestrel tasks [--json]: the tasks found (built-in plus --tasks-dir).

#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "core/candidate.h"
#include "cli/cli.h"
#include "cli/output.h"

namespace kestrel::cli {
namespace {

// Configurations of the knob space of a source: the product of value counts.
std::int64_t KnobSpace(const std::string& source) {
  auto knobs = ParseKnobs(source);
  if (!knobs) return 0;
  std::int64_t space = 1;
  for (const auto& knob : *knobs) space *= static_cast<std::int64_t>(knob.values.size());
  return space;
}

}  // namespace

void AddTasksCommand(CLI::App& app, Cli& cli) {
  auto json = std::make_shared<bool>(false);
  CLI::App* tasks = app.add_subcommand("tasks", "list the tasks found (built-in configs/tasks plus --tasks-dir)");
  tasks->add_flag("--json", *json, "print one JSON document");
  tasks->callback([json, &cli] {
    auto loaded = LoadTasks(cli.TaskDirs());
    if (!loaded) return (void)cli.Report(loaded.error());
    if (*json) {
      nlohmann::json list = nlohmann::json::array();
      for (const Task& task : *loaded) {
        std::int64_t space = 0;
        for (const auto& seed : task.seeds) space += KnobSpace(seed.text);
        list.push_back({{"name", task.name},
                        {"language", task.language},
                        {"description", task.description},
                        {"signature", task.Signature()},
                        {"shapes", task.shapes},
                        {"check_shapes", task.check_shapes},
                        {"knob_configurations", space},
                        {"dir", task.dir.string()}});
      }
      std::cout << list.dump(2) << "\n";
      return;
    }
    Table table({"task", "language", "shapes", "knob configs", "description"});
    for (const Task& task : *loaded) {
      std::int64_t space = 0;
      for (const auto& seed : task.seeds) space += KnobSpace(seed.text);
      table.Add({task.name, task.language, std::to_string(task.shapes.size()), std::to_string(space), task.description});
    }
    table.Print(std::cout);
  });
}

}  // namespace kestrel::cli
