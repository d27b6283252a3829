// kestrel doctor [--json]: checks what a search needs on this machine (the
// compiler, the runner, the sandbox, Graphviz, the tasks, the database) and
// says what is missing and how to fix it. Exit 0 unless a check failed.

#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/host.h"
#include "evaluators/compiler.h"
#include "evaluators/cpu_evaluator.h"
#include "evaluators/sandbox.h"
#include "evaluators/subprocess.h"
#include "search/cli/cli.h"
#include "search/cli/output.h"
#include "search/run_config.h"

namespace kestrel::cli {
namespace {

struct Check {
  std::string name;
  std::string state;  // ok | warn | fail
  std::string detail;
  std::string fix;    // how to fix it, when not ok
};

Check CheckCompiler(const std::string& compiler) {
  auto version = CompilerVersion(compiler);
  if (!version) return {"compiler", "fail", version.error().message(), "apt-get install g++ (or set evaluator.compiler)"};
  return {"compiler", "ok", compiler + ": " + *version, ""};
}

Check CheckRunner() {
  auto runner = DefaultRunnerPath();
  if (!runner) return {"runner", "fail", runner.error().message(), "build it: scripts/setup"};
  return {"runner", "ok", runner->string(), ""};
}

Check CheckSandbox() {
  const SandboxReport report = DetectSandbox();
  std::string state = report.bwrap && report.seccomp ? "ok" : report.seccomp ? "warn" : "fail";
  std::string fix;
  if (!report.bwrap) fix = "apt-get install bubblewrap, and allow unprivileged user namespaces";
  if (!report.seccomp) fix += std::string(fix.empty() ? "" : "; ") + "a kernel with seccomp filters";
  return {"sandbox", state, report.Summary(), fix};
}

Check CheckGraphviz() {
  auto dot = FindProgram("dot");
  if (!dot) return {"graphviz", "warn", "dot not found: `kestrel graph --format svg` needs it", "apt-get install graphviz"};
  return {"graphviz", "ok", dot->string(), ""};
}

Check CheckTasks(const Cli& cli) {
  auto tasks = LoadTasks(cli.TaskDirs());
  if (!tasks) return {"tasks", "fail", tasks.error().message(), "fix the task named in the message"};
  std::string names;
  for (const Task& task : *tasks) names += (names.empty() ? "" : " ") + task.name;
  return {"tasks", "ok", fmt::format("{} found: {}", tasks->size(), names), ""};
}

Check CheckDatabase(const Cli& cli) {
  if (!std::filesystem::exists(cli.db)) {
    return {"database", "ok", cli.db + " does not exist yet; `kestrel run` creates it", ""};
  }
  auto store = Store::Open(cli.db, Store::Mode::kReadOnly);
  if (!store) return {"database", "fail", store.error().message(), "open it read-write once, or use another --db"};
  auto integrity = (*store)->IntegrityOk();
  if (!integrity || !*integrity) {
    return {"database", "fail", cli.db + ": PRAGMA integrity_check failed", "restore a backup; sqlite3 .recover"};
  }
  return {"database", "ok", fmt::format("{}: schema v{}, integrity ok", cli.db, (*store)->SchemaVersion()), ""};
}

Check CheckHost() {
  const HostInfo host = DetectHost();
  return {"host", "ok",
          fmt::format("{}: {}, {} cores, L1d {} KiB, L2 {} KiB, L3 {} KiB, ISA {}", host.name, host.cpu_model,
                      host.cores, host.l1d_bytes / 1024, host.l2_bytes / 1024, host.l3_bytes / 1024,
                      host.isa.empty() ? "-" : host.isa),
          ""};
}

}  // namespace

void AddDoctorCommand(CLI::App& app, Cli& cli) {
  auto json = std::make_shared<bool>(false);
  CLI::App* doctor = app.add_subcommand("doctor", "check the compiler, runner, sandbox, tasks and database");
  doctor->add_flag("--json", *json, "print one JSON document");
  doctor->callback([json, &cli] {
    const EvaluatorConfig defaults;
    const std::vector<Check> checks = {CheckCompiler(defaults.compiler), CheckRunner(), CheckSandbox(),
                                       CheckGraphviz(), CheckTasks(cli), CheckDatabase(cli), CheckHost()};
    bool failed = false;
    nlohmann::json document = nlohmann::json::array();
    Table table({"check", "state", "detail"});
    for (const Check& check : checks) {
      failed = failed || check.state == "fail";
      document.push_back({{"check", check.name}, {"state", check.state}, {"detail", check.detail}, {"fix", check.fix}});
      table.Add({check.name, check.state, check.detail + (check.fix.empty() ? "" : "  -> " + check.fix)});
    }
    if (*json) {
      std::cout << document.dump(2) << "\n";
    } else {
      table.Print(std::cout);
      std::cout << "not checked yet: LLM endpoints, hardware calibration (not built yet)\n";
    }
    cli.exit_code = failed ? kExitFailure : kExitOk;
  });
}

}  // namespace kestrel::cli
