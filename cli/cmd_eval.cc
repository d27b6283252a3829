// kestrel eval TASK FILE [--knob NAME=VALUE]... [--sweep] [--repeat N] [--fingerprints-only]:
// compile, verify and time one kernel file against the task, exactly as the
// search would; with --sweep, every combination of its knob values with one
// evaluator; with --repeat, each N times with it (as a search measures a
// candidate again); with --fingerprints-only, build them only and count the
// same code.

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "evaluators/calibration.h"
#include "core/json_text.h"
#include "evaluators/make_evaluator.h"
#include "cli/cli.h"
#include "cli/knob_choice.h"
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
  bool fingerprints_only = false;
  int jobs = 2;
  int repeat = 1;
};

// --fingerprints-only: builds every configuration (`jobs` at a time) and
// prints each one's code hash (BuildResult::code_hash) and the first earlier
// configuration with the same code, then how many configurations an
// exhaustive search would not time (the same_code edges it would make).
void PrintFingerprints(Evaluator& evaluator, const Task& task, const EvalFlags& flags, const std::string& source,
                       const std::vector<KnobValues>& space) {
  std::vector<BuildResult> builds(space.size());
  std::atomic<std::size_t> next{0};
  {
    std::vector<std::jthread> workers;
    for (int worker = 0; worker < std::max(flags.jobs, 1); ++worker) {
      workers.emplace_back([&] {
        for (std::size_t i = next++; i < space.size(); i = next++) {
          builds[i] = evaluator.Build({source, space[i], evaluator.Toolchain(), evaluator.Flags()});
        }
      });
    }
  }
  std::map<std::string, std::size_t> first_with;  // code hash -> first configuration built to it
  std::int64_t built = 0, unknown = 0, same_code = 0;
  for (std::size_t i = 0; i < space.size(); ++i) {
    const BuildResult& build = builds[i];
    built += build.ok;
    unknown += build.ok && build.code_hash.empty();
    std::optional<std::size_t> twin;
    if (build.ok && !build.code_hash.empty()) {
      const auto [at, added] = first_with.emplace(build.code_hash, i);
      if (!added) twin = at->second;
    }
    same_code += twin.has_value();
    if (flags.json) {
      std::cout << JsonText(nlohmann::json{{"task", task.name},
                                           {"file", flags.file},
                                           {"knobs", space[i]},
                                           {"built", build.ok},
                                           {"code_hash", build.code_hash},
                                           {"same_code_as", twin ? nlohmann::json(space[*twin]) : nlohmann::json()}})
                << std::endl;
    } else {
      std::cout << fmt::format("{:<60} {}{}\n", ToString(space[i]),
                               !build.ok ? "build failed" : build.code_hash.empty() ? "unknown" : build.code_hash.substr(0, 16),
                               twin ? "  same code as " + ToString(space[*twin]) : "");
    }
  }
  const auto distinct = static_cast<std::int64_t>(first_with.size());
  if (flags.json) {
    std::cout << JsonText(nlohmann::json{{"task", task.name},
                                         {"file", flags.file},
                                         {"summary", true},
                                         {"configurations", space.size()},
                                         {"built", built},
                                         {"unknown", unknown},
                                         {"distinct_codes", distinct},
                                         {"same_code", same_code}})
              << std::endl;
  } else {
    std::cout << fmt::format("{} configurations, {} built, {} distinct codes ({} without a fingerprint): same_code "
                             "saves {} evaluations of an exhaustive search\n",
                             space.size(), built, distinct, unknown, same_code);
  }
}

}  // namespace

void AddEvalCommand(CLI::App& app, Cli& cli) {
  auto flags = std::make_shared<EvalFlags>();
  CLI::App* eval = app.add_subcommand("eval", "compile, verify and time one kernel file against a task");
  eval->add_option("task", flags->task, "the task's name")->required();
  eval->add_option("file", flags->file, "the kernel source file")->required()->check(CLI::ExistingFile);
  eval->add_option("--knob", flags->knobs, "NAME=VALUE for a knob the file declares (default: its first value)");
  eval->add_option("--config", flags->config_file, "take the evaluator settings from this run config");
  eval->add_option("--min-time", flags->min_time, "seconds of timing per shape and kernel")->check(ZeroOrMore());
  eval->add_flag("--json", flags->json, "print one JSON document");
  eval->add_flag("--samples", flags->samples, "include the raw timing samples in --json output");
  eval->add_flag("--sweep", flags->sweep,
                 "evaluate every combination of the file's knob values (a --knob fixes one) with one evaluator, "
                 "printing one --json document per line");
  eval->add_flag("--fingerprints-only", flags->fingerprints_only,
                 "build only, and print each configuration's code hash and which earlier one has the same code");
  eval->add_option("--jobs", flags->jobs, "with --fingerprints-only: builds at once (default 2)")->check(AboveZero());
  eval->add_option("--repeat", flags->repeat,
                   "evaluate each configuration this many times with one evaluator, as a search measures a "
                   "candidate again (default 1); more than 1 prints one --json document per line")
      ->check(AboveZero());
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
    if (flags->fingerprints_only) {
      PrintFingerprints(**evaluator, *task, *flags, text.str(), *space);
      cli.exit_code = kExitOk;
      return;
    }
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
    const bool lines = flags->sweep || flags->repeat > 1;
    for (const KnobValues& knobs : *space) {
      for (int round = 0; round < flags->repeat; ++round) {
        Candidate candidate{text.str(), knobs, (*evaluator)->Toolchain(), (*evaluator)->Flags()};
        const Measurement measurement = (*evaluator)->Evaluate(candidate);
        if (flags->json || lines) {
          nlohmann::json document = ToJson(measurement, flags->samples);
          document["task"] = task->name;
          document["file"] = flags->file;
          document["knobs"] = knobs;
          document["identity"] = candidate.Identity();
          // A sweep's reader takes each line as it comes (JSON Lines).
          std::cout << (lines ? JsonText(document) : JsonText(document, 2)) << std::endl;
        } else {
          std::cout << task->name << " " << flags->file;
          if (!knobs.empty()) std::cout << " [" << ToString(knobs) << "]";
          std::cout << "\n";
          PrintMeasurement(std::cout, measurement);
        }
      }
    }
    cli.exit_code = kExitOk;
  });
}

}  // namespace kestrel::cli
