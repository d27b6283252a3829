#pragma once
// The LLM mutator (LLM.md): asks a model for a rewrite of the parent, or for
// a fix of a failed node it made. The rewrite follows a recommendation of the
// parent's analysis (analyst.h) when the run has an analyst and the parent
// one, siblings different ones; otherwise a direction its bandit chooses
// (direction_bandit.h), credited with what the children it made achieved
// (OnResult) and saved with the run's state. With `plan`, a first call asks
// for a plan and a second implements it. Every call it makes travels back in MutationResult::calls for
// the engine's record stage to store; the API key lives in the client only.
//
// A reply without code, with an empty block or cut at the token limit is a
// decline with the reason recorded in the call, and so is a prompt too long
// for the model's context (kContextLength: the next prompt may fit). A
// failure whose kind StopsMutator (auth, quota, bad request) stops this
// mutator for the rest of the run: every later call declines without a
// request, and the first result after the failure carries `stop_reason`.
// Spend (calls in flight reserved) is kept by the run's Budget; a call that
// could take it past the usd budget is not made (paid_call.h): when the
// settled spend alone leaves no room the result is `budget_spent` and the run
// stops; when the calls in flight hold the rest, only this expansion
// declines.

#include <memory>

#include "core/host.h"
#include "core/task.h"
#include "llm/llm_client.h"
#include "search/engine/budget.h"
#include "search/mutators/mutator.h"
#include "search/run_config.h"

namespace kestrel {

class Analyst;

class Reviewer;

struct LlmContext {
  std::shared_ptr<const Task> task;  // required
  HostInfo host;
  int threads = 1;  // threads the evaluator allows the kernel
  std::shared_ptr<Budget> budget;  // required: the run's, shared with the engine
  // The run's analyst, shared by its llm mutators; null: none (the
  // directions come from the mutator's bandit).
  std::shared_ptr<Analyst> analyst{};
  // A person reviewing every proposal and plan (`kestrel run --review`); null: none.
  std::shared_ptr<Reviewer> reviewer{};
};

// `config` gives the model, temperature, max_tokens and prices (for the spend
// estimate: prompt characters / 4 input tokens plus max_tokens output tokens).
std::unique_ptr<Mutator> MakeLlmMutator(const MutatorConfig& config, std::shared_ptr<LlmClient> client,
                                        LlmContext context);

// The endpoint of an llm mutator config with `api_key` (from ReadApiKey):
// a request deadline from timeout_s (RequestDeadline), and for OpenAI's
// reasoning models (IsOpenAiReasoningModel) no temperature and, unless
// max_tokens_field says otherwise, max_completion_tokens.
LlmEndpoint EndpointFor(const MutatorConfig& config, std::string api_key);

}  // namespace kestrel
