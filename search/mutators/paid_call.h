#pragma once
// One LLM call paid from the run's usd budget, as every LLM call of a search
// makes it (the LLM mutator's mutations, fixes, combines and plans, the
// analyst's analyses): reserved for its estimate (prompt characters / 4
// input tokens plus max_tokens output tokens at the endpoint's prices),
// refused when the budget cannot hold it, made, settled with its actual cost
// and turned into the LlmCallRecord the record stage stores.

#include <functional>
#include <string>

#include "llm/llm_client.h"
#include "store/records.h"

namespace kestrel {

class Budget;
struct MutatorConfig;

struct PaidCall {
  bool made = false;  // false: the budget would be exceeded; nothing was sent
  LlmResponse response;
  LlmCallRecord record;  // of a call made; `error` set when it failed
};

// `cancelled` ends a call in flight (the engine is stopping).
PaidCall MakePaidCall(LlmClient& client, Budget& budget, const MutatorConfig& config, const LlmRequest& request,
                      const std::string& purpose, std::function<bool()> cancelled);

}  // namespace kestrel
