#include "search/mutators/analyst.h"

#include <chrono>

#include <fmt/format.h>

#include "llm/llm_client.h"
#include "search/mutators/paid_call.h"

namespace kestrel {
namespace {

// Whether a profile digest holds a finding: a digest whose every line says
// that a source is not available (a command harness that sent no profile)
// gives the analyst nothing to read, and is not worth a paid call.
bool HasFindings(const std::string& digest) {
  std::size_t start = 0;
  while (start < digest.size()) {
    std::size_t end = digest.find('\n', start);
    if (end == std::string::npos) end = digest.size();
    const std::string_view line(digest.data() + start, end - start);
    if (!line.empty() && !line.starts_with("not available:")) return true;
    start = end + 1;
  }
  return false;
}

std::shared_ptr<const Analysis> Parsed(const std::string& reply) {
  auto analysis = ParseAnalysis(reply);
  return analysis ? std::make_shared<const Analysis>(std::move(*analysis)) : nullptr;
}

}  // namespace

Analyst::Analyst(MutatorConfig config, std::shared_ptr<LlmClient> client, std::shared_ptr<Budget> budget)
    : config_(std::move(config)), client_(std::move(client)), budget_(std::move(budget)) {}

Analyst::Verdict Analyst::AnalysisOf(const ParentView& parent, const MutationPromptInput& input,
                                     const std::function<bool()>& cancelled) {
  Verdict verdict;
  if (!HasFindings(parent.profile_digest)) return verdict;
  {
    std::unique_lock lock(mutex_);
    if (entries_.contains(parent.id)) {
      // Another expansion of this node asked first: its analysis, once made
      // (none when its call could not be paid for).
      for (auto found = entries_.find(parent.id); found != entries_.end() && !found->second.ready && !cancelled();
           found = entries_.find(parent.id)) {
        done_.wait_for(lock, std::chrono::milliseconds(100));
      }
      if (const auto found = entries_.find(parent.id); found != entries_.end()) verdict.analysis = found->second.analysis;
      return verdict;
    }
    if (parent.stored_analysis) {
      entries_[parent.id] = {true, Parsed(*parent.stored_analysis)};
      verdict.analysis = entries_[parent.id].analysis;
      return verdict;
    }
    if (stopped_) return verdict;
    entries_[parent.id] = {};  // this expansion pays; the others wait
  }
  PaidCall paid = MakePaidCall(*client_, *budget_, config_, WithGuidance(AnalysisPrompt(input), parent.human), "analysis", cancelled);
  std::shared_ptr<const Analysis> analysis;
  if (!paid.made) {
    verdict.budget_spent = paid.budget_spent;
    verdict.budget_held = !paid.budget_spent;
    verdict.note = paid.budget_spent
                       ? fmt::format("analyst {}: the usd budget would be exceeded; node {} is not analysed",
                                     config_.model, parent.id)
                       : fmt::format("analyst {}: the usd budget left is held by calls in flight; node {} is not "
                                     "analysed yet", config_.model, parent.id);
  } else {
    LlmCallRecord& call = paid.record;
    call.node_id = parent.id;
    if (paid.response.ok()) {
      auto parsed = ParseAnalysis(paid.response.text);
      if (parsed) {
        analysis = std::make_shared<const Analysis>(std::move(*parsed));
      } else {
        call.error = "malformed analysis: " + parsed.error().message();
      }
    }
    if (!analysis) verdict.note = fmt::format("analyst {}: node {} has no analysis ({}); directions come from the "
                                              "bandit", config_.model, parent.id, call.error);
    verdict.call = std::move(call);
  }
  {
    std::lock_guard lock(mutex_);
    if (paid.made && !paid.response.ok() && StopsMutator(paid.response.kind)) stopped_ = true;
    if (paid.made) {
      entries_[parent.id] = {true, analysis};
    } else {
      entries_.erase(parent.id);  // not paid: a later expansion may try again
    }
  }
  done_.notify_all();
  verdict.analysis = std::move(analysis);
  return verdict;
}

}  // namespace kestrel
