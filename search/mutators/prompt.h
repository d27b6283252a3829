#pragma once
// Prompts for LLM mutations (LLM.md, "What a mutation prompt carries"). Pure
// functions: the same inputs give the same request, nothing is read or sent.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/candidate.h"
#include "core/host.h"
#include "core/outcome.h"
#include "core/task.h"
#include "llm/llm_client.h"
#include "search/mutators/mutator.h"

namespace kestrel {

// The directions a mutation prompt asks for, one per prompt, so that siblings
// explore different ideas.
const std::vector<std::string>& MutationDirections();

// Everything a mutation prompt is made of. Strings may be empty; empty lists
// are left out of the prompt.
struct MutationPromptInput {
  const Task* task = nullptr;  // required
  Candidate parent;            // source and knob values
  std::string measurement;     // the parent's latest result, e.g. "1.80x; n=1000: 1.2e-4 s"
  std::vector<LineageEntry> lineage;  // seed first
  std::vector<std::string> inspirations;     // other strong nodes' sources
  std::vector<std::string> recent_failures;  // short reasons
  std::string direction;                     // one of MutationDirections()
  HostInfo host;
  int threads = 1;        // threads the evaluator allows
  int max_tokens = 16000;
  double temperature = 0.7;
};

// System prompt + one user message asking for a complete, improved kernel file
// in one fenced code block.
LlmRequest MutationPrompt(const MutationPromptInput& input);

// A request to repair `source` that ended with `outcome` (build_failed, wrong,
// crashed...): the failing source, the outcome and reason, and `log` trimmed to
// its first lines; asks for the corrected complete file.
LlmRequest FixPrompt(const Task& task, const Candidate& source, Outcome outcome, std::string_view reason,
                     std::string_view log, const HostInfo& host, int threads = 1, int max_tokens = 16000,
                     double temperature = 0.7);

// One of two measured versions a combine prompt holds: its node, code and
// latest measurement.
struct CombineParent {
  std::int64_t node = 0;
  Candidate candidate;
  std::string measurement;  // e.g. "1.80x; n=1000: 1.2e-4 s"
};

// A request to recombine two measured versions with different sources: both
// codes and their measurements, asking for one kernel that takes the best of
// each.
LlmRequest CombinePrompt(const Task& task, const CombineParent& first, const CombineParent& second,
                         const HostInfo& host, int threads = 1, int max_tokens = 16000, double temperature = 0.7);

// `log` cut to at most `max_lines` lines and `max_chars` characters.
std::string TrimLog(std::string_view log, std::size_t max_lines = 40, std::size_t max_chars = 4000);

}  // namespace kestrel
