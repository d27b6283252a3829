// kestrel eval TASK FILE [--knob NAME=VALUE]... [--sweep]: compile, verify and
// time one kernel file against the task, exactly as the search would; with
// --sweep, every combination of its knob values with one evaluator.

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "evaluators/calibration.h"
#include "evaluators/make_evaluator.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "cli/session_printer.h"
#include "search/run_session.h"

namespace kestrel::cli {
namespace {

struct EvalFlags {
  std::string task;
  std::string file;
  std::vector<std::string> knobs;
  std::string config_file;
  double min_time = -1;
  bool json = false;
  bool samples = false;
  bool sweep = false;
};

// The knob settings to evaluate: the one the --knob flags choose (the
// declared defaults for the others), or with `sweep` every combination of the
// declared values with the --knob ones fixed, in declared order of knobs and
// values, the last knob varying fastest (as Python's itertools.product).
Result<std::vector<KnobValues>> ChooseKnobs(const std::string& source, const std::vector<std::string>& settings,
                                            bool sweep) {
  auto declared = ParseKnobs(source);
  if (!declared) return Fail(declared.error());
  KnobValues fixed;
  for (const auto& setting : settings) {
    const auto equals = setting.find('=');
    if (equals == std::string::npos) {
      return Fail(Error::InvalidArgument("--knob " + setting + ": expected NAME=VALUE"));
    }
    fixed[setting.substr(0, equals)] = setting.substr(equals + 1);
  }
  KnobValues chosen = DefaultKnobs(*declared);
  for (const auto& [name, value] : fixed) chosen[name] = value;
  if (auto status = CheckKnobValues(*declared, chosen); !status) return Fail(status.error().WithContext("--knob"));
  std::vector<KnobValues> space = {chosen};
  if (!sweep) return space;
  for (const KnobSpec& knob : *declared) {
    if (fixed.contains(knob.name)) continue;
    std::vector<KnobValues> wider;
    for (const KnobValues& partial : space) {
      for (const std::string& value : knob.values) {
        wider.push_back(partial);
        wider.back()[knob.name] = value;
      }
    }
    space = std::move(wider);
  }
  return space;
}

}  // namespace

void AddEvalCommand(CLI::App& app, Cli& cli) {
  auto flags = std::make_shared<EvalFlags>();
  CLI::App* eval = app.add_subcommand("eval", "compile, verify and time one kernel file against a task");
  eval->add_option("task", flags->task, "the task's name")->required();
  eval->add_option("file", flags->file, "the kernel source file")->required()->check(CLI::ExistingFile);
  eval->add_option("--knob", flags->knobs, "NAME=VALUE for a knob the file declares (default: its first value)");
  eval->add_option("--config", flags->config_file, "take the evaluator settings from this run config");
  eval->add_option("--min-time", flags->min_time, "seconds of timing per shape and kernel")->check(CLI::NonNegativeNumber);
  eval->add_flag("--json", flags->json, "print one JSON document");
  eval->add_flag("--samples", flags->samples, "include the raw timing samples in --json output");
  eval->add_flag("--sweep", flags->sweep,
                 "evaluate every combination of the file's knob values (a --knob fixes one) with one evaluator, "
                 "printing one --json document per line");
  eval->callback([flags, &cli] {
    auto task = FindTask(flags->task, cli.TaskDirs(), &std::cerr);
    if (!task) return (void)cli.Report(task.error().IsNotFound() ? Error::InvalidArgument(task.error().message()) : task.error());
    std::ifstream in(flags->file);
    std::stringstream text;
    text << in.rdbuf();
    auto space = ChooseKnobs(text.str(), flags->knobs, flags->sweep);
    if (!space) return (void)cli.Report(space.error().WithContext(flags->file));
    RunConfig config;
    if (!flags->config_file.empty()) {
      auto loaded = LoadRunConfig(flags->config_file);
      if (!loaded) return (void)cli.Report(loaded.error());
      config = *loaded;
    }
    if (flags->min_time >= 0) config.evaluator.measure.min_time_s = flags->min_time;
    auto evaluator = MakeEvaluator(*task, config.evaluator, config.seed, {}, config.executor);
    if (!evaluator) return (void)cli.Report(evaluator.error());
    // The host's roofline: from the database when it has one (measured and
    // kept there otherwise); without a database, from the user's cache.
    if (std::filesystem::exists(cli.db)) {
      auto store = Store::Open(cli.db);
      if (!store) return (void)cli.Report(store.error());
      auto host_id = (*store)->UpsertHost((*evaluator)->Host());
      if (!host_id) return (void)cli.Report(host_id.error());
      if (auto calibration = EnsureCalibration(**store, *host_id, **evaluator, config.evaluator.threads,
                                                 PrintSessionEvents(std::cerr));
          !calibration) {
        std::cerr << "kestrel: no calibration (" << calibration.error().message() << "); roofline checks are off\n";
      }
    } else if (config.evaluator.kind != "cpu") {
      // The cpu roofline says nothing of another device.
    } else if (auto calibration = CachedCalibration(config.evaluator.compiler, config.evaluator.threads,
                                                    (*evaluator)->Host());
               calibration) {
      (*evaluator)->SetCalibration(*calibration);
    } else {
      std::cerr << "kestrel: no calibration (" << calibration.error().message() << "); roofline checks are off\n";
    }
    // One evaluator for the whole sweep: the reference's build and the
    // prepared inputs are made once, as in a run.
    for (const KnobValues& knobs : *space) {
      Candidate candidate{text.str(), knobs, (*evaluator)->Toolchain(), (*evaluator)->Flags()};
      const Measurement measurement = (*evaluator)->Evaluate(candidate);
      if (flags->json || flags->sweep) {
        nlohmann::json document = ToJson(measurement, flags->samples);
        document["task"] = task->name;
        document["file"] = flags->file;
        document["knobs"] = knobs;
        document["identity"] = candidate.Identity();
        // A sweep's reader takes each line as it comes (JSON Lines).
        std::cout << (flags->sweep ? document.dump() : document.dump(2)) << std::endl;
      } else {
        std::cout << task->name << " " << flags->file;
        if (!knobs.empty()) std::cout << " [" << ToString(knobs) << "]";
        std::cout << "\n";
        PrintMeasurement(std::cout, measurement);
      }
    }
    cli.exit_code = kExitOk;
  });
}

}  // namespace kestrel::cli
