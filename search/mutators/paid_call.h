#pragma once
// One LLM call paid from the run's usd budget, as every LLM call of a search
// makes it (the LLM mutator's mutations, fixes, combines and plans, the
// analyst's analyses): reserved for its estimate (prompt characters / 4
// input tokens plus max_tokens output tokens at the endpoint's prices),
// refused when the budget cannot hold it, made, settled with its actual cost
// and turned into the LlmCallRecord the record stage stores.
//
// A refusal is one of two (Budget::Reserve): the run's usd budget is spent,
// and the run stops; or the calls in flight hold what is left, and the call
// waits for one of them to settle and tries once more, so that a caller
// that then declines is not asked again at once while they are out.

#include <functional>
#include <string>

#include "llm/llm_client.h"
#include "store/records.h"

namespace kestrel {

class Budget;
struct MutatorConfig;

struct PaidCall {
  bool made = false;  // false: the budget could not hold it; nothing was sent
  // Not made because the settled spend and this call's estimate pass the usd
  // budget: the run stops. Not made and false: the calls in flight held the
  // rest even after one settled (or `cancelled` ended the wait); a later
  // call may fit.
  bool budget_spent = false;
  LlmResponse response;
  LlmCallRecord record;  // of a call made; `error` set when it failed
};

// `cancelled` ends a call in flight, or the wait for room (the engine is stopping).
PaidCall MakePaidCall(LlmClient& client, Budget& budget, const MutatorConfig& config, const LlmRequest& request,
                      const std::string& purpose, std::function<bool()> cancelled);

}  // namespace kestrel
