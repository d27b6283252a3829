#pragma once
// Prompts for LLM mutations (LLM.md, "What a mutation prompt carries"). Pure
// functions: the same inputs give the same request, nothing is read or sent.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/candidate.h"
#include "core/host.h"
#include "core/outcome.h"
#include "core/task.h"
#include "llm/llm_client.h"
#include "llm/analysis.h"
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
  std::vector<Inspiration> inspirations;     // other strong nodes, best first
  std::vector<std::string> recent_failures;  // short reasons
  // Where the parent stands: its profile digest ("" none), its roofline
  // fraction and bound ("" unknown), the expert baseline's speedup (0 none).
  std::string profile_digest;
  double roofline_fraction = 0.0;
  std::string bound;
  double baseline_speedup = 0.0;
  // What to change: a recommendation of the analysis (rank `rank` of
  // `recommendations`, from 1) when one is given, else `direction`, one of
  // MutationDirections().
  std::string direction;
  std::optional<Recommendation> recommendation;
  std::size_t rank = 0;
  std::size_t recommendations = 0;
  // Plan then implement: the plan the first call returned ("" none).
  std::string plan;
  // Versions asked for (MutatorConfig::variants): above 1, the output format
  // asks for that many different complete files, each in its own block.
  int variants = 1;
  HostInfo host;
  int threads = 1;        // threads the evaluator allows
  int max_tokens = 16000;
  double temperature = 0.7;
};

// One version of a reply that gave several (MutatorConfig::variants):
// "llm:m:vectorize" -> "llm:m:vectorize (version 2 of 3)" (index from 0);
// the mutation itself when the reply gave one (count 1).
std::string VersionLabel(std::string_view mutation, std::size_t index, std::size_t count);
// What a cost model predicted for it, inside the version's brackets:
// "... (version 2 of 3, 1.84x predicted)"; "... (1.84x predicted)" without.
std::string WithPrediction(std::string_view label, double speedup);
// The mutation without its version part and prediction: their inverse.
std::string_view WithoutVersion(std::string_view mutation);

// System prompt + one user message asking for a complete, improved kernel file
// in one fenced code block.
LlmRequest MutationPrompt(const MutationPromptInput& input);

// A request to the analyst: the task, the parent's code and measurement,
// its profile digest, roofline position and the expert baseline's speedup,
// asking for JSON: the bottlenecks with their evidence and up to three
// ranked recommendations (analysis.h).
LlmRequest AnalysisPrompt(const MutationPromptInput& input);

// The first call of plan then implement: the mutation prompt's content,
// asking for a short numbered plan and no code.
LlmRequest PlanPrompt(const MutationPromptInput& input);

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

// `request` with the person's guidance appended to its last message
// ("Instructions from the person running this search", their notes on the
// lineage, rejected proposals and why); unchanged when there is none.
LlmRequest WithGuidance(LlmRequest request, const HumanGuidance& human);

// `log` cut to at most `max_lines` lines and `max_chars` characters.
std::string TrimLog(std::string_view log, std::size_t max_lines = 40, std::size_t max_chars = 4000);

}  // namespace kestrel
