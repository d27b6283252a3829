#pragma once
// What `kestrel doctor` asks of evaluators/: can this machine build and
// measure what a run config's evaluator block asks for (the compiler, the
// runner and its worker, each layer of the sandbox, nvcc and a GPU, the
// command evaluator's commands), and how to fix what is missing.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "evaluators/evaluator_config.h"

namespace kestrel {

// ok; warn: some runs cannot work (no GPU); fail: what a search needs is missing.
enum class CheckState { kOk, kWarn, kFail };

std::string_view ToString(CheckState state);  // "ok", "warn", "fail"
std::optional<CheckState> ParseCheckState(std::string_view text);

struct Check {
  std::string name;  // "compiler", "sandbox: seccomp", ...
  CheckState state = CheckState::kOk;
  std::string detail;
  std::string fix;  // how to fix it, when not ok
};

// The checks in order: compiler, runner, one per sandbox layer, cuda, and
// for kind "command" its commands. Runs `<compiler> --version`, the runner's
// device probe and the sandbox detection here; never throws.
std::vector<Check> Diagnose(const EvaluatorConfig& config);

// One check per profile source (profile_sources.h), "profile: pmu",
// "profile: cachegrind", "profile: objdump", "profile: compiler remarks",
// "profile: ncu": ok when it works here, else a warning with the reason
// (a profile does without it) and the fix. Never throws.
std::vector<Check> DiagnoseProfileSources(const EvaluatorConfig& config);

}  // namespace kestrel
