// kestrel doctor [--config RUN.json] [--json]: checks what a search needs on
// this machine (the compiler, the runner, the sandbox, Graphviz, the tasks,
// the database and, given a run config, each LLM endpoint it names: a tiny
// request, its latency and reply) and says what is missing and how to fix it.
// Exit 0 unless a check failed.

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/host.h"
#include "evaluators/compiler.h"
#include "evaluators/cpu_evaluator.h"
#include "evaluators/command_evaluator.h"
#if KESTREL_WITH_CUDA
#include "evaluators/cuda_evaluator.h"
#endif
#include "evaluators/sandbox.h"
#include "evaluators/subprocess.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "llm/llm_client.h"
#include "search/mutators/llm_mutator.h"
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
  auto worker = DefaultWorkerPath();
  if (!worker) return {"runner", "fail", worker.error().message(), "build it: scripts/setup"};
  return {"runner", "ok", runner->string() + " (supervisor), " + worker->string() + " (one per kernel)", ""};
}

// One line per layer of the sandbox a kernel runs in (evaluators/sandbox.h);
// a missing layer fails: LLM-written kernels are refused without it.
std::vector<Check> CheckSandbox() {
  const SandboxReport report = DetectSandbox();
  std::vector<Check> checks;
  for (const auto& [layer, state] : report.Layers()) {
    const bool missing = state.rfind("MISSING", 0) == 0;
    std::string fix;
    if (missing && layer == "seccomp") fix = "a kernel with seccomp filters, and libseccomp";
    if (missing && layer != "seccomp") fix = "apt-get install bubblewrap, and allow user namespaces";
    checks.push_back({"sandbox: " + layer, missing ? "fail" : "ok", state, fix});
  }
  return checks;
}

// The command evaluator's commands (kind "command"): placeholders, and the
// programs that do not depend on a placeholder.
Check CheckCommandEvaluator(const EvaluatorConfig& evaluator) {
  CommandEvaluatorOptions options;
  options.build = evaluator.build;
  options.run = evaluator.run;
  if (auto valid = ValidateCommands(options); !valid) return {"evaluator", "fail", valid.error().message(), "fix the run config"};
  std::string detail = "command: run " + evaluator.run.front();
  for (const auto* argv : {&evaluator.build, &evaluator.run}) {
    if (argv->empty() || argv->front().find('{') != std::string::npos) continue;
    if (auto found = FindProgram(argv->front()); !found) {
      return {"evaluator", "fail", found.error().message(), "install it or fix the run config"};
    }
  }
  return {"evaluator", "ok", detail + " (the reference is measured through it when a run starts)", ""};
}

// nvcc and a GPU, for the cuda evaluator (docs/CUDA.md). No GPU is a
// warning: cpu and command evaluations do not need one.
Check CheckCuda() {
#if KESTREL_WITH_CUDA
  const CudaDeviceReport report = DetectCuda();
  if (!report.nvcc_found) return {"cuda", "warn", "nvcc not found: cuda tasks cannot build", "install the CUDA toolkit"};
  if (report.devices == 0) {
    return {"cuda", "warn", "nvcc " + report.nvcc_version + "; no GPU found (" + report.detail + ")",
            "cuda tasks need an NVIDIA GPU and its driver"};
  }
  return {"cuda", "ok", fmt::format("nvcc {}; {} GPU(s): {}", report.nvcc_version, report.devices, report.detail), ""};
#else
  return {"cuda", "warn", "this build has no CUDA evaluator (no toolkit in /usr/local/cuda when configured)",
          "install the CUDA toolkit and run scripts/setup again"};
#endif
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

// One tiny request to the endpoint of an llm mutator config: one try, a short
// deadline, 16 reply tokens.
Check CheckEndpoint(const MutatorConfig& mutator, std::size_t index) {
  const std::string name = fmt::format("llm[{}]", index);
  const std::string what = fmt::format("{} {} at {}", mutator.provider.empty() ? "openai" : mutator.provider,
                                       mutator.model, mutator.base_url);
  auto key = ReadApiKey(mutator.api_key_env);
  if (!key) return {name, "fail", what + ": " + key.error().message(), "export " + mutator.api_key_env + "=..."};
  LlmEndpoint endpoint = EndpointFor(mutator, std::move(*key));
  endpoint.max_tries = 1;
  endpoint.timeout_s = std::min(endpoint.timeout_s, 30.0);
  endpoint.total_deadline_s = endpoint.timeout_s + 5.0;
  auto client = LlmClient::Make(endpoint);
  if (!client) return {name, "fail", what + ": " + client.error().message(), "fix the run config"};
  LlmRequest request;
  request.messages = {{"user", "Reply with the single word: ok"}};
  request.max_tokens = 16;
  request.temperature = 0.0;
  const LlmResponse response = (*client)->Complete(request);
  if (!response.ok()) {
    const std::string fix = response.kind == LlmErrorKind::kAuth    ? "check the key in " + mutator.api_key_env
                            : response.kind == LlmErrorKind::kQuota ? "add credit or raise the quota"
                            : response.kind == LlmErrorKind::kBadRequest
                                ? "check the model name and base_url"
                                : "check that the server is up and reachable";
    return {name, "fail",
            fmt::format("{}: {} after {:.2f}s (HTTP {}): {}", what, ToString(response.kind), response.latency_s,
                        response.http_status, response.error),
            fix};
  }
  std::string reply = response.text.substr(0, 40);
  std::replace(reply.begin(), reply.end(), '\n', ' ');
  return {name, "ok",
          fmt::format("{}: answered in {:.2f}s ({} in / {} out tokens): \"{}\"", what, response.latency_s,
                      response.input_tokens, response.output_tokens, reply),
          ""};
}

}  // namespace

void AddDoctorCommand(CLI::App& app, Cli& cli) {
  auto json = std::make_shared<bool>(false);
  auto config_file = std::make_shared<std::string>();
  CLI::App* doctor = app.add_subcommand("doctor", "check the compiler, runner, sandbox, tasks, database and LLM endpoints");
  doctor->add_option("--config", *config_file, "a run config: check its compiler and send a tiny request to each LLM endpoint");
  doctor->add_flag("--json", *json, "print one JSON document");
  doctor->callback([json, config_file, &cli] {
    RunConfig config;
    if (!config_file->empty()) {
      auto loaded = LoadRunConfig(*config_file);
      if (!loaded) return (void)cli.Report(loaded.error());
      config = *loaded;
    }
    std::vector<Check> checks = {CheckCompiler(config.evaluator.compiler), CheckRunner()};
    for (Check& layer : CheckSandbox()) checks.push_back(std::move(layer));
    for (Check check : {CheckGraphviz(), CheckTasks(cli), CheckDatabase(cli), CheckHost(), CheckCuda()}) {
      checks.push_back(std::move(check));
    }
    if (config.evaluator.kind == "command") checks.push_back(CheckCommandEvaluator(config.evaluator));
    bool any_llm = false;
    for (std::size_t i = 0; i < config.mutators.size(); ++i) {
      if (config.mutators[i].kind != "llm") continue;
      any_llm = true;
      checks.push_back(CheckEndpoint(config.mutators[i], i));
    }
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
      if (!any_llm) std::cout << "LLM endpoints: none checked (give --config RUN.json to send each a tiny request)\n";
    }
    cli.exit_code = failed ? kExitFailure : kExitOk;
  });
}

}  // namespace kestrel::cli
