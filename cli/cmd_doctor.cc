// kestrel doctor [--config RUN.json] [--json]: checks what a search needs on
// this machine (the compiler, the runner, the sandbox, the profile sources
// (PMU, cachegrind, objdump, compiler remarks, ncu), Graphviz, the tasks,
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
#include "core/json_text.h"
#include "evaluators/diagnosis.h"
#include "evaluators/subprocess.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "llm/llm_client.h"
#include "search/mutators/llm_mutator.h"
#include "search/run_config.h"

namespace kestrel::cli {
namespace {

Check CheckGraphviz() {
  auto dot = FindProgram("dot");
  if (!dot) return {"graphviz", CheckState::kWarn, "dot not found: `kestrel graph --format svg` needs it", "apt-get install graphviz"};
  return {"graphviz", CheckState::kOk, dot->string(), ""};
}

Check CheckTasks(const Cli& cli) {
  auto tasks = LoadTasks(cli.TaskDirs());
  if (!tasks) return {"tasks", CheckState::kFail, tasks.error().message(), "fix the task named in the message"};
  std::string names;
  for (const Task& task : *tasks) names += (names.empty() ? "" : " ") + task.name;
  return {"tasks", CheckState::kOk, fmt::format("{} found: {}", tasks->size(), names), ""};
}

Check CheckDatabase(const Cli& cli) {
  if (!std::filesystem::exists(cli.db)) {
    return {"database", CheckState::kOk, cli.db + " does not exist yet; `kestrel run` creates it", ""};
  }
  auto store = Store::Open(cli.db, Store::Mode::kReadOnly);
  if (!store) return {"database", CheckState::kFail, store.error().message(), "open it read-write once, or use another --db"};
  auto integrity = (*store)->IntegrityOk();
  if (!integrity || !*integrity) {
    return {"database", CheckState::kFail, cli.db + ": PRAGMA integrity_check failed", "restore a backup; sqlite3 .recover"};
  }
  return {"database", CheckState::kOk, fmt::format("{}: schema v{}, integrity ok", cli.db, (*store)->SchemaVersion()), ""};
}

Check CheckHost() {
  const HostInfo host = DetectHost();
  return {"host", CheckState::kOk,
          fmt::format("{}: {}, {} cores, L1d {} KiB, L2 {} KiB, L3 {} KiB, ISA {}", host.name, host.cpu_model,
                      host.cores, host.l1d_bytes / 1024, host.l2_bytes / 1024, host.l3_bytes / 1024,
                      host.isa.empty() ? "-" : host.isa),
          ""};
}

// One tiny request to the endpoint of an llm mutator config (or the
// analyst's): one try, a short deadline, 16 reply tokens.
Check CheckEndpoint(const MutatorConfig& mutator, const std::string& name) {
  const std::string what = fmt::format("{} {} at {}", mutator.provider.empty() ? "openai" : mutator.provider,
                                       mutator.model, mutator.base_url);
  auto key = ReadApiKey(mutator.api_key_env);
  if (!key) return {name, CheckState::kFail, what + ": " + key.error().message(), "export " + mutator.api_key_env + "=..."};
  LlmEndpoint endpoint = EndpointFor(mutator, std::move(*key));
  endpoint.max_tries = 1;
  endpoint.timeout_s = std::min(endpoint.timeout_s, 30.0);
  endpoint.total_deadline_s = endpoint.timeout_s + 5.0;
  auto client = LlmClient::Make(endpoint);
  if (!client) return {name, CheckState::kFail, what + ": " + client.error().message(), "fix the run config"};
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
    return {name, CheckState::kFail,
            fmt::format("{}: {} after {:.2f}s (HTTP {}): {}", what, ToString(response.kind), response.latency_s,
                        response.http_status, response.error),
            fix};
  }
  std::string reply = response.text.substr(0, 40);
  std::replace(reply.begin(), reply.end(), '\n', ' ');
  return {name, CheckState::kOk,
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
    std::vector<Check> checks = Diagnose(config.evaluator);
    for (Check check : DiagnoseProfileSources(config.evaluator)) checks.push_back(std::move(check));
    for (Check check : {CheckGraphviz(), CheckTasks(cli), CheckDatabase(cli), CheckHost()}) {
      checks.push_back(std::move(check));
    }
    bool any_llm = false;
    for (std::size_t i = 0; i < config.mutators.size(); ++i) {
      if (config.mutators[i].kind != "llm") continue;
      any_llm = true;
      checks.push_back(CheckEndpoint(config.mutators[i], fmt::format("llm[{}]", i)));
    }
    if (config.analyst.endpoint) {  // the default analyst is an llm mutator's endpoint, checked above
      any_llm = true;
      checks.push_back(CheckEndpoint(*config.analyst.endpoint, "analyst"));
    }
    bool failed = false;
    nlohmann::json document = nlohmann::json::array();
    Table table({"check", "state", "detail"});
    for (const Check& check : checks) {
      failed = failed || check.state == CheckState::kFail;
      const std::string state(ToString(check.state));
      document.push_back({{"check", check.name}, {"state", state}, {"detail", check.detail}, {"fix", check.fix}});
      table.Add({check.name, state, check.detail + (check.fix.empty() ? "" : "  -> " + check.fix)});
    }
    if (*json) {
      std::cout << JsonText(document, 2) << "\n";
    } else {
      table.Print(std::cout);
      if (!any_llm) std::cout << "LLM endpoints: none checked (give --config RUN.json to send each a tiny request)\n";
    }
    cli.exit_code = failed ? kExitFailure : kExitOk;
  });
}

}  // namespace kestrel::cli
