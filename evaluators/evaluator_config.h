#pragma once
// The run config's "evaluator" and "executor" blocks (CONTRACT.md, "Run
// config"; search/run_config.cc parses them): which evaluator measures, with
// what, and where its programs run. MakeEvaluator (make_evaluator.h) turns
// them into an Evaluator; Diagnose (diagnosis.h) checks them.

#include <string>
#include <vector>

#include "evaluators/measure_options.h"

namespace kestrel {

struct EvaluatorConfig {
  std::string kind = "cpu";
  std::string compiler = "c++";
  std::vector<std::string> flags = {"-O3", "-march=native"};
  int threads = 1;
  // min_time, min_samples, input_sets, max_speedup and timeout_s (the run's
  // wall clock: run_timeout_s); the seed is the run config's.
  MeasureOptions measure;
  bool flush_cache = false;   // evict the caches before each timing sample
  // Kind "cpu": where a profile's counts come from (docs/PROFILES.md):
  // "auto" (the PMU where it is readable, else cachegrind), "pmu" or
  // "cachegrind" (deterministic, at a valgrind run's cost).
  std::string profile_counters = "auto";
  std::string sandbox = "auto";  // "auto" (every layer available) or "none" (unconfined, by choice)
  std::string arch = "sm_90";  // kind "cuda": nvcc -arch (compiler: the nvcc, "" for the default)
  // kind "command" (evaluators/command_evaluator.h): argv templates with
  // placeholders; build may be empty. measure.run_timeout_s is the run command's.
  std::vector<std::string> build;
  std::vector<std::string> run;
  double build_timeout_s = 600;
  // The sandbox of a program that loads the kernel itself (kinds "command"
  // and "cuda"; sandbox_args.h): more read-only paths it may see, and
  // variables passed in with their values; "command" only: device nodes
  // (globs under /dev) it may use.
  std::vector<std::string> binds;
  std::vector<std::string> pass_env;
  std::vector<std::string> devices;
};

// Where the measure step runs (docs/SLURM.md). "local": here; "slurm": every
// evaluator's measure step as Slurm jobs (up to parallel.measure_slots at
// once), through a folder the nodes share; with `builds`, the builds too.
struct ExecutorConfig {
  std::string kind = "local";
  std::string partition;
  std::string gres;
  std::string time_limit = "10:00";
  std::string queue_limit = "1:00:00";
  std::string shared_dir;
  std::vector<std::string> sbatch_args;
  bool builds = false;
};

}  // namespace kestrel
