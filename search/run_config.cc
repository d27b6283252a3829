#include "search/run_config.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/json_fields.h"
#include "evaluators/slurm_executor.h"
#include "search/strategies/strategy.h"

namespace kestrel {
namespace {

using nlohmann::json;
constexpr double kHuge = std::numeric_limits<double>::max();
constexpr std::int64_t kHugeInt = std::numeric_limits<std::int64_t>::max();

Status ParseStrategy(const json& object, const std::string& origin, StrategyConfig& out) {
  JsonFields fields(object, origin, "strategy");
  fields.OneOf("name", out.name, StrategyNames());
  fields.Number("exploration", out.exploration, 0.0, 100.0);
  fields.Number("subtree_weight", out.subtree_weight, 0.0, 1.0);
  fields.Integer("beam_width", out.beam_width, 1, 1'000'000);
  fields.Integer("keep_factor", out.keep_factor, 1, 1'000'000);
  fields.Integer("islands", out.islands, 1, 1024);
  fields.Integer("migration_interval", out.migration_interval, 1, 1'000'000'000);
  // Each strategy's own parameters; another's is a mistake worth a message
  // (a "beam_width" under "random" was dropped without one).
  const auto only = [&](std::initializer_list<const char*> keys, std::initializer_list<const char*> strategies) {
    const bool reads = std::find(strategies.begin(), strategies.end(), out.name) != strategies.end();
    std::string names;
    for (const char* name : strategies) names += std::string(names.empty() ? "" : ", ") + name;
    for (const char* key : keys) {
      if (!reads && fields.Has(key)) {
        fields.Fail(key, "no such parameter for strategy \"" + out.name + "\" (only for " + names + ")");
      }
    }
  };
  // ("exploration" is allowed with any: saved configs have always stated it.)
  only({"subtree_weight"}, {"graph-ucb", "islands", "model", "portfolio"});
  only({"beam_width", "keep_factor"}, {"beam"});
  only({"islands", "migration_interval"}, {"islands"});
  return fields.Finish();
}

// "temperature": a number, or null for none (the server's default).
void ParseTemperature(JsonFields& fields, const json& object, MutatorConfig& out) {
  if (fields.Has("temperature") && object.at("temperature").is_null()) {
    fields.MarkSeen("temperature");
    out.send_temperature = false;
    return;
  }
  fields.Number("temperature", out.temperature, 0.0, 2.0);
}

// "max_tokens_field": absent (by the model), or one of the two names; the
// Anthropic API knows only max_tokens.
void ParseMaxTokensField(JsonFields& fields, MutatorConfig& out) {
  if (!fields.Has("max_tokens_field")) return;
  fields.OneOf("max_tokens_field", out.max_tokens_field, {"max_tokens", "max_completion_tokens"});
  if (out.provider == "anthropic" && out.max_tokens_field == "max_completion_tokens") {
    fields.Fail("max_tokens_field", "\"max_tokens\" for provider anthropic (its API has no other)");
  }
}

// The fields of an LLM endpoint, shared by llm mutators and the analyst.
Status ParseLlmFields(JsonFields& fields, const json& object, const std::string& origin, MutatorConfig& out) {
  fields.OneOf("provider", out.provider, {"openai", "anthropic"});
  fields.String("model", out.model);
  fields.String("base_url", out.base_url);
  fields.String("api_key_env", out.api_key_env);
  fields.Integer("max_concurrency", out.max_concurrency, 1, 1024);
  fields.Number("timeout_s", out.timeout_s, 1.0, 86400.0);
  ParseTemperature(fields, object, out);
  fields.Integer("max_tokens", out.max_tokens, 1, 10'000'000);
  ParseMaxTokensField(fields, out);
  if (const json* price = fields.Object("price_per_mtok")) {
    JsonFields price_fields(*price, origin, fields.PathOf("price_per_mtok"));
    price_fields.Number("input", out.price_input_per_mtok, 0.0, 1e6);
    price_fields.Number("output", out.price_output_per_mtok, 0.0, 1e6);
    if (auto status = price_fields.Finish(); !status) return status;
  }
  if (out.model.empty()) fields.Fail("model", "a model name");
  return {};
}

json LlmFieldsJson(const MutatorConfig& llm) {
  json fields = {{"provider", llm.provider},
                 {"model", llm.model},
                 {"base_url", llm.base_url},
                 {"api_key_env", llm.api_key_env},  // the variable's name, never its value
                 {"max_concurrency", llm.max_concurrency},
                 {"timeout_s", llm.timeout_s},
                 {"temperature", llm.send_temperature ? json(llm.temperature) : json(nullptr)},
                 {"max_tokens", llm.max_tokens},
                 {"price_per_mtok", {{"input", llm.price_input_per_mtok}, {"output", llm.price_output_per_mtok}}}};
  // Absent: by the model, also when a resumed run reads it back.
  if (!llm.max_tokens_field.empty()) fields["max_tokens_field"] = llm.max_tokens_field;
  return fields;
}

Status ParseMutator(const json& object, const std::string& origin, const std::string& path, MutatorConfig& out) {
  JsonFields fields(object, origin, path);
  fields.OneOf("kind", out.kind, {"knob", "llm"});
  if (!fields.Has("kind")) fields.Fail("kind", "\"knob\" or \"llm\" (the field is missing)");
  fields.Number("weight", out.weight, 0.0, 1e6);
  if (out.kind == "llm") {
    if (auto status = ParseLlmFields(fields, object, origin, out); !status) return status;
    fields.Number("combine_share", out.combine_share, 0.0, 1.0);
    fields.Boolean("plan", out.plan);
    fields.Integer("variants", out.variants, 1, 8);
  }
  return fields.Finish();
}

// "analyst": false, or an object of LLM endpoint fields.
Status ParseAnalyst(const json& value, const std::string& origin, AnalystConfig& out) {
  if (value.is_boolean()) {
    if (value.get<bool>()) {
      return Fail(Error::InvalidArgument(origin + ": analyst: expected false or an object with a model (true is "
                                                  "the default: leave the field out)"));
    }
    out.off = true;
    return {};
  }
  if (!value.is_object()) {
    return Fail(Error::InvalidArgument(origin + ": analyst: expected false or an object, got " + DescribeJson(value)));
  }
  MutatorConfig endpoint;
  endpoint.kind = "llm";
  JsonFields fields(value, origin, "analyst");
  if (auto status = ParseLlmFields(fields, value, origin, endpoint); !status) return status;
  if (auto status = fields.Finish(); !status) return status;
  out.endpoint = endpoint;
  return {};
}

Status ParseEvaluator(const json& object, const std::string& origin, EvaluatorConfig& out) {
  JsonFields fields(object, origin, "evaluator");
  fields.OneOf("kind", out.kind, {"cpu", "cuda", "command"});
  const bool command = out.kind == "command";
  const bool cuda = out.kind == "cuda";
  // Each kind's own fields; another kind's is a mistake worth a message.
  const auto only = [&](std::initializer_list<const char*> keys, bool allowed, const std::string& kinds) {
    for (const char* key : keys) {
      if (!allowed && fields.Has(key)) fields.Fail(key, "no such field for kind \"" + out.kind + "\" (only for " + kinds + ")");
    }
  };
  only({"compiler", "flags"}, !command, "\"cpu\" and \"cuda\"");
  only({"threads", "flush_cache", "profile_counters"}, out.kind == "cpu", "\"cpu\"");
  only({"binds", "pass_env"}, command || cuda, "\"command\" and \"cuda\"");
  only({"devices"}, command, "\"command\"");
  only({"arch"}, cuda, "\"cuda\"");
  only({"build", "run", "build_timeout_s"}, command, "\"command\"");
  if (cuda) {
    // nvcc's own defaults: -march=native means nothing to it.
    out.compiler = "";
    out.flags = {"-O3"};
  }
  fields.String("arch", out.arch);
  fields.StringList("build", out.build);
  fields.StringList("run", out.run);
  fields.Number("build_timeout_s", out.build_timeout_s, 0.1, 86400.0);
  if (command && out.run.empty()) fields.Fail("run", "a non-empty argv array, e.g. [\"{build_dir}/bench\", \"{answer}\", \"{nonce}\"]");
  fields.String("compiler", out.compiler);
  fields.StringList("flags", out.flags);
  fields.Integer("threads", out.threads, 1, 4096);
  fields.Number("min_time", out.measure.min_time_s, 0.0, 3600.0);
  fields.Integer("min_samples", out.measure.min_samples, 1, 1'000'000);
  fields.Integer("input_sets", out.measure.input_sets, 1, 100);
  fields.Number("timeout_s", out.measure.run_timeout_s, 0.1, 86400.0);
  fields.Number("max_speedup", out.measure.max_speedup, 1.0, 1e9);
  fields.Boolean("flush_cache", out.flush_cache);
  fields.OneOf("profile_counters", out.profile_counters, {"auto", "pmu", "cachegrind"});
  fields.OneOf("sandbox", out.sandbox, {"auto", "none"});
  fields.StringList("binds", out.binds);
  fields.StringList("pass_env", out.pass_env);
  fields.StringList("devices", out.devices);
  if (out.compiler.empty() && !cuda) fields.Fail("compiler", "a compiler command");
  return fields.Finish();
}

Status ParseExecutor(const json& object, const std::string& origin, ExecutorConfig& out) {
  JsonFields fields(object, origin, "executor");
  fields.OneOf("kind", out.kind, {"local", "slurm"});
  const bool slurm = out.kind == "slurm";
  for (const char* key : {"partition", "gres", "time_limit", "queue_limit", "shared_dir", "sbatch_args", "builds"}) {
    if (!slurm && fields.Has(key)) fields.Fail(key, "no such field for kind \"local\" (only for \"slurm\")");
  }
  fields.String("partition", out.partition);
  fields.String("gres", out.gres);
  fields.String("time_limit", out.time_limit);
  fields.String("queue_limit", out.queue_limit);
  fields.String("shared_dir", out.shared_dir);
  fields.StringList("sbatch_args", out.sbatch_args);
  fields.Boolean("builds", out.builds);
  if (slurm && out.shared_dir.empty()) {
    fields.Fail("shared_dir", "a folder the compute nodes share with this host (the work dir is made there)");
  }
  if (slurm && out.time_limit.empty()) fields.Fail("time_limit", "a Slurm time such as \"10:00\"");
  if (slurm && !out.time_limit.empty() && !ParseSlurmTime(out.time_limit)) {
    fields.Fail("time_limit", "a Slurm time with a limit such as \"30\" (minutes), \"10:00\", \"1:00:00\" or \"1-12\"");
  }
  if (slurm && !ParseSlurmTime(out.queue_limit, "executor.queue_limit")) {
    fields.Fail("queue_limit", "the longest a job may wait in the queue, a Slurm time such as \"30\" (minutes), "
                               "\"1:00:00\" or \"1-0\"");
  }
  return fields.Finish();
}

Status ParseBudget(const json& object, const std::string& origin, BudgetConfig& out) {
  JsonFields fields(object, origin, "budget");
  if (fields.Has("time")) {
    std::string text;
    fields.String("time", text);
    if (object.at("time").is_string()) {  // else String recorded the error
      auto duration = ParseDuration(text);
      if (!duration) {
        fields.Fail("time", "a duration longer than zero, such as 90s, 10m, 8h or 1h30m");
      } else {
        out.time = *duration;
      }
    }
  }
  if (fields.Has("evaluations")) {
    std::int64_t value = 0;
    fields.Integer("evaluations", value, 1, kHugeInt);
    out.evaluations = value;
  }
  if (fields.Has("usd")) {
    double value = 0;
    fields.Number("usd", value, 0.0, kHuge);
    out.usd = value;
  }
  if (fields.Has("plateau")) {
    std::int64_t value = 0;
    fields.Integer("plateau", value, 1, kHugeInt);
    out.plateau = value;
  }
  if (fields.Has("roofline")) {
    double value = 0;
    fields.Number("roofline", value, 0.0, 1.5);
    if (value <= 0.0) fields.Fail("roofline", "a fraction of the roofline above 0 and at most 1.5, e.g. 0.9");
    out.roofline = value;
  }
  return fields.Finish();
}

Status ParseParallel(const json& object, const std::string& origin, ParallelConfig& out) {
  JsonFields fields(object, origin, "parallel");
  fields.Integer("compile_jobs", out.compile_jobs, 1, 1024);
  fields.Integer("measure_slots", out.measure_slots, 1, 1024);
  fields.Integer("max_in_flight", out.max_in_flight, 0, 100000);
  return fields.Finish();
}

Status ParseConfirm(const json& object, const std::string& origin, ConfirmConfig& out) {
  JsonFields fields(object, origin, "confirm");
  fields.Integer("top", out.top, 0, 1000);
  fields.Integer("rounds", out.rounds, 0, 100);
  return fields.Finish();
}

// speedup: a jump over the previous best (more than 1x); roofline: a
// fraction of the host's roofline (up to 1.5, as budget.roofline).
Status ParseReview(const json& object, const std::string& origin, ReviewThresholds& out) {
  JsonFields fields(object, origin, "review");
  fields.Number("speedup", out.speedup, 1.0, 1e6);
  fields.Number("roofline", out.roofline, 0.01, 1.5);
  return fields.Finish();
}

// The name, the exploration constant (as configs have always stated it) and
// the parameters the named strategy reads.
json ToJson(const StrategyConfig& strategy) {
  json out = {{"name", strategy.name}, {"exploration", strategy.exploration}};
  if (strategy.name == "graph-ucb" || strategy.name == "islands" || strategy.name == "model" ||
      strategy.name == "portfolio") {
    out["subtree_weight"] = strategy.subtree_weight;
  }
  if (strategy.name == "beam") out.update({{"beam_width", strategy.beam_width}, {"keep_factor", strategy.keep_factor}});
  if (strategy.name == "islands") {
    out.update({{"islands", strategy.islands}, {"migration_interval", strategy.migration_interval}});
  }
  return out;
}

// A usd budget is kept with the costs of the calls, from the configured
// prices: a model without them would cost nothing on paper, and the budget
// would never stop the run. (An explicit price of 0, a free local server, is
// the user's word.)
Status CheckPriced(const json& document, const RunConfig& config, const std::string& origin) {
  if (!config.budget.usd) return {};
  const auto unpriced = [&](const std::string& path) {
    return Fail(Error::InvalidArgument(origin + ": " + path +
                                       ".price_per_mtok: expected the model's prices in USD per million tokens "
                                       "({\"input\": ..., \"output\": ...}), since budget.usd is set"));
  };
  if (document.contains("mutators")) {
    for (std::size_t i = 0; i < config.mutators.size(); ++i) {
      if (config.mutators[i].kind == "llm" && !document.at("mutators").at(i).contains("price_per_mtok")) {
        return unpriced("mutators[" + std::to_string(i) + "]");
      }
    }
  }
  if (config.analyst.endpoint && !document.at("analyst").contains("price_per_mtok")) return unpriced("analyst");
  return {};
}

}  // namespace

Result<RunConfig> ParseRunConfig(const json& document, const std::string& origin) {
  RunConfig config;
  JsonFields fields(document, origin, "");
  fields.String("task", config.task);
  if (const json* strategy = fields.Object("strategy")) {
    if (auto status = ParseStrategy(*strategy, origin, config.strategy); !status) return Fail(status.error());
  }
  if (fields.Has("mutators")) {
    const json& list = document.at("mutators");
    std::vector<MutatorConfig> mutators;
    if (!list.is_array() || list.empty()) {
      fields.Fail("mutators", "a non-empty array of mutator objects");
    } else {
      for (std::size_t i = 0; i < list.size(); ++i) {
        MutatorConfig mutator;
        const std::string path = "mutators[" + std::to_string(i) + "]";
        if (auto status = ParseMutator(list[i], origin, path, mutator); !status) return Fail(status.error());
        mutators.push_back(mutator);
      }
      config.mutators = std::move(mutators);
    }
    fields.MarkSeen("mutators");  // its type error (if any) is already recorded
  }
  if (fields.Has("analyst")) {
    if (auto status = ParseAnalyst(document.at("analyst"), origin, config.analyst); !status) return Fail(status.error());
    fields.MarkSeen("analyst");
  }
  if (const json* evaluator = fields.Object("evaluator")) {
    if (auto status = ParseEvaluator(*evaluator, origin, config.evaluator); !status) return Fail(status.error());
  }
  if (const json* executor = fields.Object("executor")) {
    if (auto status = ParseExecutor(*executor, origin, config.executor); !status) return Fail(status.error());
  }
  if (const json* budget = fields.Object("budget")) {
    if (auto status = ParseBudget(*budget, origin, config.budget); !status) return Fail(status.error());
  }
  if (const json* parallel = fields.Object("parallel")) {
    if (auto status = ParseParallel(*parallel, origin, config.parallel); !status) return Fail(status.error());
  }
  if (const json* confirm = fields.Object("confirm")) {
    if (auto status = ParseConfirm(*confirm, origin, config.confirm); !status) return Fail(status.error());
  }
  if (const json* review = fields.Object("review")) {
    if (auto status = ParseReview(*review, origin, config.review); !status) return Fail(status.error());
  }
  fields.Integer("max_fix_rounds", config.max_fix_rounds, 0, 100);
  std::int64_t seed = static_cast<std::int64_t>(config.seed);
  fields.Integer("seed", seed, 0, kHugeInt);
  config.seed = static_cast<std::uint64_t>(seed);
  if (auto status = fields.Finish(); !status) return Fail(status.error());
  if (auto status = CheckPriced(document, config, origin); !status) return Fail(status.error());
  return config;
}

Result<RunConfig> LoadRunConfig(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return Fail(Error::InvalidArgument(path.string() + ": cannot read the run config"));
  std::stringstream text;
  text << in.rdbuf();
  auto document = ParseJsonDocument(text.str(), path.string());
  if (!document) return Fail(document.error());
  return ParseRunConfig(*document, path.string());
}

Status Validate(const RunConfig& config, const std::string& origin) {
  if (config.task.empty()) {
    return Fail(Error::InvalidArgument(origin + ": task: expected a task name (give it in the config or with --task)"));
  }
  double total_weight = 0;
  for (const auto& mutator : config.mutators) total_weight += mutator.weight;
  if (!(total_weight > 0)) {
    return Fail(Error::InvalidArgument(origin + ": mutators: expected at least one mutator with a positive weight"));
  }
  return {};
}

// Each kind's own fields only, so that the document parses back.
static json ToJson(const EvaluatorConfig& evaluator) {
  json out = {{"kind", evaluator.kind},
              {"min_time", evaluator.measure.min_time_s},
              {"min_samples", evaluator.measure.min_samples},
              {"max_speedup", evaluator.measure.max_speedup},
              {"input_sets", evaluator.measure.input_sets},
              {"timeout_s", evaluator.measure.run_timeout_s}};
  if (evaluator.kind == "command") {
    out["build"] = evaluator.build;
    out["run"] = evaluator.run;
    out["build_timeout_s"] = evaluator.build_timeout_s;
    out["devices"] = evaluator.devices;
  } else {
    out["compiler"] = evaluator.compiler;
    out["flags"] = evaluator.flags;
  }
  if (evaluator.kind == "cpu") {
    out["threads"] = evaluator.threads;
    out["flush_cache"] = evaluator.flush_cache;
    out["profile_counters"] = evaluator.profile_counters;
  }
  if (evaluator.kind != "cpu") {
    out["binds"] = evaluator.binds;
    out["pass_env"] = evaluator.pass_env;
  }
  out["sandbox"] = evaluator.sandbox;
  if (evaluator.kind == "cuda") out["arch"] = evaluator.arch;
  return out;
}

json ToJson(const RunConfig& config) {
  json mutators = json::array();
  for (const auto& mutator : config.mutators) {
    json entry = {{"kind", mutator.kind}, {"weight", mutator.weight}};
    if (mutator.kind == "llm") {
      entry.update(LlmFieldsJson(mutator));
      entry.update({{"combine_share", mutator.combine_share}, {"plan", mutator.plan}, {"variants", mutator.variants}});
    }
    mutators.push_back(entry);
  }
  json budget = json::object();
  if (config.budget.time) budget["time"] = FormatDuration(*config.budget.time);
  if (config.budget.evaluations) budget["evaluations"] = *config.budget.evaluations;
  if (config.budget.usd) budget["usd"] = *config.budget.usd;
  if (config.budget.plateau) budget["plateau"] = *config.budget.plateau;
  if (config.budget.roofline) budget["roofline"] = *config.budget.roofline;
  json document = {
      {"task", config.task},
      {"strategy", ToJson(config.strategy)},
      {"mutators", mutators},
      {"evaluator", ToJson(config.evaluator)},
      {"executor", config.executor.kind == "slurm"
                       ? json{{"kind", "slurm"},
                              {"partition", config.executor.partition},
                              {"gres", config.executor.gres},
                              {"time_limit", config.executor.time_limit},
                              {"queue_limit", config.executor.queue_limit},
                              {"shared_dir", config.executor.shared_dir},
                              {"sbatch_args", config.executor.sbatch_args},
                              {"builds", config.executor.builds}}
                       : json{{"kind", "local"}}},
      {"budget", budget},
      {"parallel", {{"compile_jobs", config.parallel.compile_jobs},
                    {"measure_slots", config.parallel.measure_slots},
                    {"max_in_flight", config.parallel.max_in_flight}}},
      {"confirm", {{"top", config.confirm.top}, {"rounds", config.confirm.rounds}}},
      {"review", {{"speedup", config.review.speedup}, {"roofline", config.review.roofline}}},
      {"max_fix_rounds", config.max_fix_rounds},
      {"seed", config.seed},
  };
  // Absent: the default (the first llm mutator's endpoint).
  if (config.analyst.off) document["analyst"] = false;
  if (config.analyst.endpoint) document["analyst"] = LlmFieldsJson(*config.analyst.endpoint);
  return document;
}

std::optional<MutatorConfig> AnalystEndpoint(const RunConfig& config) {
  if (config.analyst.off) return std::nullopt;
  if (config.analyst.endpoint) return config.analyst.endpoint;
  for (const MutatorConfig& mutator : config.mutators) {
    if (mutator.kind == "llm") return mutator;
  }
  return std::nullopt;
}

}  // namespace kestrel
