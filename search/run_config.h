#pragma once
// The run config (CONTRACT.md, "Run config"): parsed, validated, defaulted.
// A config that names an unknown field, a wrong type or an impossible value
// is refused with an InvalidArgument error naming the file and the field.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/duration.h"
#include "core/error.h"
#include "evaluators/evaluator_config.h"
#include "store/human_records.h"

namespace kestrel {

// The strategy and its parameters (search/strategies/strategy.h, docs/STRATEGIES.md).
// Every field is accepted whatever the name; each strategy reads its own.
struct StrategyConfig {
  std::string name = "model";      // model | portfolio | graph-ucb | beam | greedy | islands | random
  double exploration = 1.0;        // graph-ucb, islands, model, portfolio: c, the UCB exploration constant
  double subtree_weight = 0.5;     // graph-ucb, islands, model, portfolio: 1 - a, the weight of the subtree's best speedup
  int beam_width = 4;              // beam: W, the nodes kept per generation
  int keep_factor = 2;             // beam: k, expansions of each kept node per generation
  int islands = 4;                 // islands: N, the populations
  int migration_interval = 10;     // islands: selections between migrations
};

struct MutatorConfig {
  std::string kind = "knob";  // knob | llm
  double weight = 1.0;
  // llm only (validated now, used by the LLM mutator):
  std::string provider, model, base_url, api_key_env;
  int max_concurrency = 4;
  double timeout_s = 300;  // one attempt; a request's deadline follows from it (RequestDeadline)
  double temperature = 0.7;
  // false ("temperature": null): none is sent, the server's default. OpenAI's
  // reasoning models get none either way (EndpointFor): they refuse any other.
  bool send_temperature = true;
  int max_tokens = 16000;
  // The request field that carries max_tokens: "max_tokens" or
  // "max_completion_tokens"; "" (not given): by the model, the latter for
  // OpenAI's reasoning models (IsOpenAiReasoningModel in llm/llm_client.h).
  std::string max_tokens_field;
  double price_input_per_mtok = 0.0;
  double price_output_per_mtok = 0.0;
  // The share of expansions that recombine the parent with a strong measured
  // node of another source (a `combine` prompt with both); 0: never.
  double combine_share = 0.2;
  // Plan then implement: a first call asks for a short plan (purpose
  // "plan"), a second implements it (purpose "mutate").
  bool plan = false;
  // Versions asked for per rewrite (1..8). With more than one, the reply's
  // versions are ranked by the strategy's cost model of code features (model
  // and portfolio; else kept in the reply's order): the first is built now,
  // the rest when the parent is expanded again, without a call.
  int variants = 1;
};

// The analysis model (issue 18): the llm fields of a MutatorConfig (provider,
// model, base_url, api_key_env, timeout_s, max_tokens, max_tokens_field,
// temperature, prices, max_concurrency); the rest is unused. `"analyst":
// false` turns it off; absent, the first llm mutator's endpoint analyses
// (AnalystEndpoint).
struct AnalystConfig {
  bool off = false;
  std::optional<MutatorConfig> endpoint;  // given in the config
};

struct BudgetConfig {
  std::optional<Seconds> time;
  std::optional<std::int64_t> evaluations;
  std::optional<double> usd;
  std::optional<std::int64_t> plateau;  // stop after this many evaluations without a new best
  // Stop once a confirmed best reaches this fraction of the roofline (0 < x <= 1.5).
  std::optional<double> roofline;
};

struct ParallelConfig {
  int compile_jobs = 2;
  int measure_slots = 1;
  int max_in_flight = 0;  // 0: compile_jobs + measure_slots + 1
  int InFlight() const { return max_in_flight > 0 ? max_in_flight : compile_jobs + measure_slots + 1; }
};

// Confirmation (EVALUATION.md): a result faster than the incumbent is
// re-measured `rounds` times interleaved with it, and must beat it by more
// than the noise those measurements show; at the end of a run the `top`
// candidates are re-measured `rounds` times. rounds 0: off.
struct ConfirmConfig {
  int top = 3;
  int rounds = 2;
};

struct RunConfig {
  std::string task;
  StrategyConfig strategy;
  std::vector<MutatorConfig> mutators = {MutatorConfig{}};
  AnalystConfig analyst;
  EvaluatorConfig evaluator;
  ExecutorConfig executor;
  BudgetConfig budget;
  ParallelConfig parallel;
  ConfirmConfig confirm;
  int max_fix_rounds = 3;
  std::uint64_t seed = 1;
  // When a result awaits a person's review (`kestrel best` lists it until
  // it is labelled; the search never waits): "review": {"speedup": 5,
  // "roofline": 0.8}.
  ReviewThresholds review;
};

// The endpoint that analyses profiled parents: the config's analyst, else
// the first llm mutator's; none when the analyst is off or no llm mutator exists.
std::optional<MutatorConfig> AnalystEndpoint(const RunConfig& config);

// Parses a config document; `origin` names it in messages (a file path).
// Besides each field's own checks, a usd budget needs the prices of every
// model it pays for: an llm mutator or analyst without price_per_mtok is
// refused then (its calls would cost nothing, and the budget never stop).
Result<RunConfig> ParseRunConfig(const nlohmann::json& document, const std::string& origin);
Result<RunConfig> LoadRunConfig(const std::filesystem::path& path);
// The effective config, as stored with the run (never an API key).
nlohmann::json ToJson(const RunConfig& config);
// Cross-field checks after flags were applied (a task is named, budgets positive...).
Status Validate(const RunConfig& config, const std::string& origin);

}  // namespace kestrel
