#pragma once
// The analyst (issue 18, LLM.md "Analysis"): before the LLM mutators expand
// a profiled node for the first time, one call to the analysis model reads
// its code, profile digest, roofline position and the expert baseline's
// speedup and answers with bottlenecks and ranked recommendations
// (analysis.h), which the node's mutations then follow.
//
// One analysis per node and run: the first expansion to ask pays for the
// call (through the run's Budget, like any LLM call) and gets its record
// (purpose "analysis", node_id the analysed node) to hand to the record
// stage; expansions of the same node in flight meanwhile wait for it and
// reuse it. A node whose analysis an earlier session stored
// (ParentView::stored_analysis) is not analysed again. A reply that is not
// an analysis is recorded as such (the call's error) and the node has none:
// its mutations fall back to the direction bandit. An auth, quota or bad
// request failure stops the analyst for the rest of the run.
//
// Thread-safety: AnalysisOf may be called from many threads at once.

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "llm/analysis.h"
#include "search/mutators/prompt.h"
#include "search/run_config.h"

namespace kestrel {

class Budget;
class LlmClient;

class Analyst {
 public:
  // `config`: the analysis endpoint's fields (AnalystEndpoint).
  Analyst(MutatorConfig config, std::shared_ptr<LlmClient> client, std::shared_ptr<Budget> budget);

  struct Verdict {
    std::shared_ptr<const Analysis> analysis;  // null: none (not profiled, failed, malformed)
    std::optional<LlmCallRecord> call;         // the call this expansion paid for, to store
    std::string note;                          // why there is none, when worth a run event
    bool budget_spent = false;                 // the usd budget is spent: the run stops
    // The calls in flight held the rest of the usd budget: the expansion
    // declines, and a later one may pay for the analysis.
    bool budget_held = false;
  };

  // The analysis of `parent` (with its context; `input` is its mutation
  // prompt's content, which the analysis prompt shares). A parent without a
  // profile digest, or whose digest only lists the sources not available,
  // is not analysed. `cancelled` ends a call or a wait.
  Verdict AnalysisOf(const ParentView& parent, const MutationPromptInput& input,
                     const std::function<bool()>& cancelled);

 private:
  struct Entry {
    bool ready = false;
    std::shared_ptr<const Analysis> analysis;
  };

  MutatorConfig config_;
  std::shared_ptr<LlmClient> client_;
  std::shared_ptr<Budget> budget_;
  std::mutex mutex_;  // guards the three below
  std::condition_variable done_;
  std::unordered_map<NodeId, Entry> entries_;
  bool stopped_ = false;
};

}  // namespace kestrel
