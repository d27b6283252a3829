#include "search/mutators/llm_mutator.h"
#include "core/json_text.h"
#include "search/mutators/reviewer.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iterator>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "llm/code_block.h"
#include "core/stop.h"
#include "search/knobs/knob_advisor.h"
#include "search/mutators/analyst.h"
#include "search/mutators/direction_bandit.h"
#include "search/mutators/paid_call.h"
#include "search/mutators/prompt.h"

namespace kestrel {

LlmEndpoint EndpointFor(const MutatorConfig& config, std::string api_key) {
  LlmEndpoint endpoint;
  endpoint.provider = config.provider.empty() ? "openai" : config.provider;
  endpoint.model = config.model;
  endpoint.base_url = !config.base_url.empty()                ? config.base_url
                      : endpoint.provider == "anthropic"      ? "https://api.anthropic.com/v1"
                                                              : "https://api.openai.com/v1";
  endpoint.api_key = std::move(api_key);
  endpoint.timeout_s = config.timeout_s;
  endpoint.total_deadline_s = RequestDeadline(config.timeout_s);
  endpoint.max_concurrency = config.max_concurrency;
  endpoint.price_input_per_mtok = config.price_input_per_mtok;
  endpoint.price_output_per_mtok = config.price_output_per_mtok;
  // OpenAI's reasoning models answer 400 to max_tokens and to any temperature
  // but their default: the CONTRACT's own example (gpt-5 at 0.7) must work.
  const bool reasoning = endpoint.provider == "openai" && IsOpenAiReasoningModel(endpoint.model);
  endpoint.use_max_completion_tokens =
      config.max_tokens_field.empty() ? reasoning : config.max_tokens_field == "max_completion_tokens";
  endpoint.send_temperature = config.send_temperature && !reasoning;
  return endpoint;
}

namespace {

constexpr char kRecommendationMark[] = "rec ";
// Versions waiting to be built, over all parents (they are saved with every result).
constexpr std::size_t kWaitingLimit = 32;

class LlmMutator final : public Mutator {
 public:
  LlmMutator(const MutatorConfig& config, std::shared_ptr<LlmClient> client, LlmContext context)
      : config_(config), client_(std::move(client)), context_(std::move(context)), bandit_(MutationDirections()) {}

  std::string_view Kind() const override { return "llm"; }
  bool WantsContext() const override { return true; }
  bool CanFix() const override { return true; }
  void Cancel() override { cancelled_.store(true); }

  std::optional<Proposal> Propose(const ParentView& parent, std::mt19937_64& rng, const IsKnown& is_known) override {
    return Expand(parent, rng, is_known).proposal;
  }

  MutationResult Expand(const ParentView& parent, std::mt19937_64& rng, const IsKnown& is_known) override {
    // A version an earlier reply made for this parent is built before a new call.
    if (auto waiting = TakeWaiting(parent); waiting) return std::move(*waiting);
    // A combine is drawn from the expansion's generator only when one is
    // possible, so a run with combine_share 0 draws what it always did.
    if (config_.combine_share > 0 && !parent.partners.empty() &&
        std::uniform_real_distribution<double>(0.0, 1.0)(rng) < config_.combine_share) {
      const CombinePartner& partner =
          parent.partners[std::uniform_int_distribution<std::size_t>(0, parent.partners.size() - 1)(rng)];
      const LlmRequest request = WithGuidance(
          CombinePrompt(*context_.task, {parent.id, parent.candidate, parent.measurement},
                        {partner.id, partner.candidate, partner.measurement}, context_.host, context_.threads,
                        config_.max_tokens, config_.temperature),
          parent.human);
      return Call(request, "combine", parent.id, parent.candidate,
                  fmt::format("combine #{} + #{}: llm:{}", parent.id, partner.id, config_.model), EdgeKind::kDerive,
                  is_known);
    }
    MutationPromptInput input = PromptInput(parent);
    MutationResult result;
    std::string label;
    if (context_.analyst && !stopped_.load()) {
      Analyst::Verdict verdict = context_.analyst->AnalysisOf(parent, input, [this] { return Cancelled(); });
      if (verdict.call) result.calls.push_back(std::move(*verdict.call));
      if (verdict.budget_spent || verdict.budget_held) {
        result.budget_spent = verdict.budget_spent;
        result.exhausted = verdict.budget_spent;
        result.note = verdict.note;
        return result;
      }
      if (!verdict.note.empty()) result.note = verdict.note;
      if (verdict.analysis) label = Follow(*verdict.analysis, parent, input);
    }
    if (label.empty()) {
      std::lock_guard lock(mutex_);
      input.direction = bandit_.arms()[bandit_.Choose(rng)];
      label = input.direction;
    }
    const std::string mutation = "llm:" + config_.model + ":" + label;
    if (config_.plan) {
      MutationResult planned = Call(WithGuidance(PlanPrompt(input), parent.human), "plan", parent.id, parent.candidate, mutation, EdgeKind::kDerive, is_known);
      const bool have_plan = !planned.calls.empty() && planned.calls.back().error.empty() && !planned.plan.empty();
      Prepend(result, planned);
      if (!have_plan) return planned;
      input.plan = planned.plan;
      result = std::move(planned);
    }
    input.variants = config_.variants;
    MutationResult made = Call(WithGuidance(MutationPrompt(input), parent.human), "mutate", parent.id, parent.candidate, mutation, EdgeKind::kDerive, is_known, parent.advisor);
    Prepend(result, made);
    return made;
  }

  MutationResult Fix(const ParentView& failed, const Measurement& measurement, const IsKnown& is_known) override {
    const LlmRequest request = WithGuidance(
        FixPrompt(*context_.task, failed.candidate, measurement.outcome, measurement.reason, measurement.log,
                  context_.host, context_.threads, config_.max_tokens, config_.temperature),
        failed.human);
    return Call(request, "fix", failed.id, failed.candidate,
                "llm:" + config_.model + ":fix " + std::string(ToString(measurement.outcome)), EdgeKind::kFix,
                is_known);
  }

  std::vector<std::pair<NodeId, std::size_t>> Waiting() const override {
    std::lock_guard lock(mutex_);
    std::vector<std::pair<NodeId, std::size_t>> waiting;
    for (const auto& [parent, versions] : waiting_) waiting.emplace_back(parent, versions.size());
    return waiting;
  }

  // A child made in a bandit direction credits it with its gain.
  void OnResult(const ChildResult& child) override {
    const std::string prefix = "llm:" + config_.model + ":";
    if (child.mutation.rfind(prefix, 0) != 0) return;
    const std::string direction(WithoutVersion(std::string_view(child.mutation).substr(prefix.size())));
    std::lock_guard lock(mutex_);
    bandit_.Credit(direction, DirectionReward(child.outcome, child.speedup, child.parent_speedup));
  }

  std::string SaveState() const override {
    std::lock_guard lock(mutex_);
    nlohmann::json followed = nlohmann::json::array();
    for (const auto& [node, count] : followed_) followed.push_back({node, count});
    std::sort(followed.begin(), followed.end());
    nlohmann::json state{{"bandit", bandit_.Save()}, {"followed", followed}};
    if (!waiting_.empty()) {
      nlohmann::json waiting = nlohmann::json::array();
      for (const auto& [parent, versions] : waiting_) {
        for (const WaitingVersion& version : versions) {
          waiting.push_back({{"parent", parent},
                             {"source", version.candidate.source},
                             {"knobs", version.candidate.knobs},
                             {"toolchain", version.candidate.toolchain},
                             {"flags", version.candidate.flags},
                             {"mutation", version.mutation}});
        }
      }
      state["waiting"] = std::move(waiting);
    }
    return JsonText(state);
  }

  Status RestoreState(const std::string& saved) override {
    try {
      const nlohmann::json state = nlohmann::json::parse(saved);
      std::unordered_map<NodeId, std::size_t> followed;
      for (const nlohmann::json& entry : state.at("followed")) {
        followed[entry.at(0).get<NodeId>()] = entry.at(1).get<std::size_t>();
      }
      std::map<NodeId, std::vector<WaitingVersion>> waiting;
      if (state.contains("waiting")) {
        for (const nlohmann::json& entry : state.at("waiting")) {
          WaitingVersion version;
          version.candidate.source = entry.at("source").get<std::string>();
          version.candidate.knobs = entry.at("knobs").get<KnobValues>();
          version.candidate.toolchain = entry.at("toolchain").get<std::string>();
          version.candidate.flags = entry.at("flags").get<std::vector<std::string>>();
          version.mutation = entry.at("mutation").get<std::string>();
          waiting[entry.at("parent").get<NodeId>()].push_back(std::move(version));
        }
      }
      std::lock_guard lock(mutex_);
      if (auto restored = bandit_.Restore(state.at("bandit")); !restored) return restored;
      followed_ = std::move(followed);
      waiting_ = std::move(waiting);
    } catch (const nlohmann::json::exception& error) {
      return Fail(Error::Corruption(std::string("the llm mutator's saved state: ") + error.what()));
    }
    return {};
  }

 private:
  bool Cancelled() const { return cancelled_.load() || StopRequested(); }

  // The calls (and note) of the steps before `later` go first into it.
  static void Prepend(MutationResult& earlier, MutationResult& later) {
    later.calls.insert(later.calls.begin(), std::make_move_iterator(earlier.calls.begin()),
                       std::make_move_iterator(earlier.calls.end()));
    earlier.calls.clear();
    later.reviews.insert(later.reviews.begin(), std::make_move_iterator(earlier.reviews.begin()),
                         std::make_move_iterator(earlier.reviews.end()));
    earlier.reviews.clear();
    if (later.note.empty()) later.note = earlier.note;
  }

  MutationPromptInput PromptInput(const ParentView& parent) const {
    MutationPromptInput input;
    input.task = context_.task.get();
    input.parent = parent.candidate;
    input.measurement = parent.measurement;
    input.lineage = parent.lineage;
    input.inspirations = parent.inspirations;
    input.recent_failures = parent.recent_failures;
    input.profile_digest = parent.profile_digest;
    input.roofline_fraction = parent.roofline_fraction;
    input.bound = parent.bound;
    input.baseline_speedup = parent.baseline_speedup;
    input.host = context_.host;
    input.threads = context_.threads;
    input.max_tokens = config_.max_tokens;
    input.temperature = config_.temperature;
    return input;
  }

  // Sets `input` to follow one of the analysis' recommendations, in rank
  // order and then round robin, so that siblings follow different ones; the
  // count starts from the parent's children that already followed one (an
  // earlier run's). Returns the mutation label.
  std::string Follow(const Analysis& analysis, const ParentView& parent, MutationPromptInput& input) {
    std::size_t index = 0;
    {
      std::lock_guard lock(mutex_);
      auto [found, added] = followed_.try_emplace(parent.id, 0);
      if (added) {
        for (const std::string& mutation : parent.child_mutations) {
          if (mutation.find(":" + std::string(kRecommendationMark)) != std::string::npos) ++found->second;
        }
      }
      index = found->second++ % analysis.recommendations.size();
    }
    input.recommendation = analysis.recommendations[index];
    input.rank = index + 1;
    input.recommendations = analysis.recommendations.size();
    return RecommendationLabel(analysis.recommendations[index], index, analysis.recommendations.size());
  }

  // Sends `request` and turns the reply into a proposal derived from `parent`.
  // A plan's reply is text: it is taken as it is, no code is looked for.
  MutationResult Call(const LlmRequest& request, const std::string& purpose, NodeId parent_id, const Candidate& parent,
                      const std::string& mutation, EdgeKind edge_kind, const IsKnown& is_known,
                      const std::shared_ptr<KnobAdvisor>& advisor = nullptr) {
    MutationResult result;
    result.exhausted = false;  // a declined call may succeed next time
    if (stopped_.load()) {
      result.exhausted = true;
      return result;
    }
    if (cancelled_.load()) {
      result.note = "llm " + config_.model + ": the run is stopping; no call made";
      return result;
    }
    // A signal or the engine's stop (time, budget) ends the call, not only selection.
    PaidCall paid = MakePaidCall(*client_, *context_.budget, config_, request, purpose, [this] { return Cancelled(); });
    if (!paid.made) return Unpaid(paid);
    const LlmResponse& response = paid.response;
    LlmCallRecord& call = paid.record;
    if (!response.ok()) {
      if (StopsMutator(response.kind) && !stopped_.exchange(true)) {
        result.stop_reason = fmt::format("the llm mutator ({} {}) stopped: {}: {}", call.provider, call.model,
                                         ToString(response.kind), call.error);
      }
      result.exhausted = stopped_.load();
      result.note = "llm call failed: " + call.error;
    } else if (response.truncated) {
      call.error = "reply cut at the token limit (finish_reason " + response.finish_reason + "); not compiled";
      result.note = call.error;
    } else if (purpose == "plan") {
      if (response.text.empty()) call.error = "empty plan";
      result.note = call.error;
      result.plan = response.text;
    } else if (purpose == "mutate" && config_.variants > 1) {
      TakeVersions(response.text, parent_id, parent, mutation, advisor, call, result);
    } else if (auto code = ExtractCode(response.text, context_.task->entry); !code) {
      call.error = "no usable code: " + code.error().message();
      result.note = call.error;
    } else {
      auto knobs = ParseKnobs(*code);
      if (!knobs) {
        call.error = "bad knob declaration: " + knobs.error().message();
        result.note = call.error;
      } else {
        Proposal proposal;
        proposal.candidate = Candidate{*code, DefaultKnobs(*knobs), parent.toolchain, parent.flags};
        proposal.mutation = mutation;
        proposal.edge_kind = edge_kind;
        result.proposal = std::move(proposal);
      }
    }
    // A known identity still goes to the engine: it becomes a duplicate edge.
    (void)is_known;
    if (context_.reviewer && (result.proposal || !result.plan.empty())) AskReviewer(parent_id, purpose, mutation, result);
    result.calls.push_back(std::move(call));
    return result;
  }

  // The decline of a call the usd budget could not hold. Spent: the run
  // stops. Held by the calls in flight: only this expansion declines (the
  // parent is not exhausted), and a later one may fit once they settle.
  MutationResult Unpaid(const PaidCall& paid) const {
    MutationResult result;
    result.budget_spent = paid.budget_spent;
    result.exhausted = paid.budget_spent;
    const double spent = context_.budget->usd_spent();
    if (paid.budget_spent) {
      result.note = fmt::format("llm {}: the usd budget would be exceeded (spent {:.4f})", config_.model, spent);
    } else if (Cancelled()) {
      result.note = "llm " + config_.model + ": the run is stopping; no call made";
    } else {
      result.note = fmt::format("llm {}: the usd budget left is held by calls in flight (spent {:.4f}); this "
                                "expansion declines", config_.model, spent);
    }
    return result;
  }

  // The versions of a reply that asked for several: each with good knob
  // declarations becomes a candidate; the one the advisor predicts fastest
  // (the first, without predictions) is the proposal, the rest wait for the
  // parent's next expansions.
  void TakeVersions(const std::string& reply, NodeId parent_id, const Candidate& parent, const std::string& mutation,
                    const std::shared_ptr<KnobAdvisor>& advisor, LlmCallRecord& call, MutationResult& result) {
    auto codes = ExtractVariants(reply, context_.task->entry, static_cast<std::size_t>(config_.variants));
    if (!codes) {
      call.error = "no usable code: " + codes.error().message();
      result.note = call.error;
      return;
    }
    std::vector<WaitingVersion> versions;
    std::vector<std::string> refused;
    for (std::size_t i = 0; i < codes->size(); ++i) {
      auto knobs = ParseKnobs((*codes)[i]);
      if (!knobs) {
        refused.push_back(fmt::format("version {}: bad knob declaration: {}", i + 1, knobs.error().message()));
        continue;
      }
      versions.push_back({Candidate{std::move((*codes)[i]), DefaultKnobs(*knobs), parent.toolchain, parent.flags},
                          VersionLabel(mutation, i, codes->size())});
    }
    if (!refused.empty()) call.error = fmt::format("{} of {} versions refused: {}", refused.size(), codes->size(), fmt::join(refused, "; "));
    if (versions.empty()) {
      result.note = call.error;
      return;
    }
    std::lock_guard lock(mutex_);
    std::vector<WaitingVersion>& queue = waiting_[parent_id];
    for (WaitingVersion& version : versions) queue.push_back(std::move(version));
    result.proposal = TakeBestLocked(parent_id, advisor);
    // Bounded, so the saved state stays small: the oldest parents' versions
    // go first (their replies stay in the stored calls).
    std::size_t total = 0;
    for (const auto& [id, waiting] : waiting_) total += waiting.size();
    while (total > kWaitingLimit && waiting_.begin()->first != parent_id) {
      total -= waiting_.begin()->second.size();
      waiting_.erase(waiting_.begin());
    }
  }

  // The next waiting version for `parent`, if any, as an expansion's result.
  std::optional<MutationResult> TakeWaiting(const ParentView& parent) {
    MutationResult result;
    result.exhausted = false;
    {
      std::lock_guard lock(mutex_);
      const auto found = waiting_.find(parent.id);
      if (found == waiting_.end()) return std::nullopt;
      result.proposal = TakeBestLocked(parent.id, parent.advisor);
    }
    if (!result.proposal) return std::nullopt;
    if (context_.reviewer) AskReviewer(parent.id, "mutate", result.proposal->mutation, result);
    return result;
  }

  // Takes the waiting version of `parent_id` predicted fastest (ties, or no
  // predictions: the reply's order). Locked.
  std::optional<Proposal> TakeBestLocked(NodeId parent_id, const std::shared_ptr<KnobAdvisor>& advisor) {
    const auto found = waiting_.find(parent_id);
    if (found == waiting_.end() || found->second.empty()) return std::nullopt;
    std::vector<WaitingVersion>& queue = found->second;
    std::size_t best = 0;
    std::optional<std::vector<float>> predicted;
    if (advisor) {  // one left is predicted too: its mutation says what the model expected
      std::vector<std::string_view> sources;
      for (const WaitingVersion& version : queue) sources.emplace_back(version.candidate.source);
      predicted = advisor->PredictSources(sources);
      if (predicted) best = static_cast<std::size_t>(std::max_element(predicted->begin(), predicted->end()) - predicted->begin());
    }
    Proposal proposal;
    proposal.candidate = std::move(queue[best].candidate);
    proposal.mutation = queue[best].mutation;
    if (predicted) proposal.mutation = WithPrediction(proposal.mutation, std::exp((*predicted)[best]));
    proposal.edge_kind = EdgeKind::kDerive;
    queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(best));
    if (queue.empty()) waiting_.erase(found);
    return proposal;
  }

  // A person's verdict on a proposal or a plan (kestrel run --review): the
  // reply stays in the LLM call as it came; an edit replaces what becomes
  // the node (or the plan), a rejection declines with the reason, which the
  // next prompt for the parent quotes (engine_human.cc).
  void AskReviewer(NodeId parent_id, const std::string& purpose, const std::string& mutation, MutationResult& result) {
    const bool is_plan = !result.proposal;
    // A question open when the run stops (a signal, the time budget) ends
    // as a rejection instead of holding the run.
    const ReviewVerdict verdict = context_.reviewer->Review(
        {parent_id, purpose, mutation, is_plan ? result.plan : result.proposal->candidate.source,
         [this] { return Cancelled(); }});
    HumanActionRecord action;
    action.author = verdict.author;
    switch (verdict.kind) {
      case ReviewVerdict::Kind::kAccept:
        action.kind = HumanActionKind::kReviewAccept;
        action.text = purpose;
        break;
      case ReviewVerdict::Kind::kEdit: {
        action.kind = HumanActionKind::kReviewEdit;
        action.text = purpose + ": edited by " + verdict.author;
        if (is_plan) {
          result.plan = verdict.text;
          break;
        }
        auto knobs = ParseKnobs(verdict.text);
        if (!knobs) {
          action.kind = HumanActionKind::kReviewReject;
          action.node_id = parent_id;
          action.text = "the edited version declares bad knobs: " + knobs.error().message();
          result.proposal.reset();
          result.note = action.text;
          break;
        }
        result.proposal->candidate.source = verdict.text;
        result.proposal->candidate.knobs = DefaultKnobs(*knobs);
        result.proposal->mutation += " (edited by " + verdict.author + ")";
        break;
      }
      case ReviewVerdict::Kind::kWithdrawn:
        // Nobody answered: the proposal is dropped, and nothing is put in a
        // person's name.
        result.proposal.reset();
        result.plan.clear();
        result.note = fmt::format("{} withdrawn: {}", is_plan ? "plan" : "proposal", verdict.text);
        return;
      case ReviewVerdict::Kind::kReject:
        action.kind = HumanActionKind::kReviewReject;
        action.node_id = parent_id;  // the next prompt for the parent quotes it
        action.text = verdict.text;
        result.proposal.reset();
        result.plan.clear();
        result.note = fmt::format("{} rejected by {}: {}", is_plan ? "plan" : "proposal", verdict.author, verdict.text);
        break;
    }
    result.reviews.push_back(std::move(action));
  }

  MutatorConfig config_;
  std::shared_ptr<LlmClient> client_;
  LlmContext context_;
  std::atomic<bool> stopped_{false};
  std::atomic<bool> cancelled_{false};
  mutable std::mutex mutex_;  // guards the two below
  DirectionBandit bandit_;
  // Per analysed parent: the recommendations its expansions followed so far.
  std::unordered_map<NodeId, std::size_t> followed_;
  // Versions of replies not built yet, by parent (ids grow with age).
  struct WaitingVersion {
    Candidate candidate;
    std::string mutation;
  };
  std::map<NodeId, std::vector<WaitingVersion>> waiting_;
};

}  // namespace

std::unique_ptr<Mutator> MakeLlmMutator(const MutatorConfig& config, std::shared_ptr<LlmClient> client,
                                        LlmContext context) {
  return std::make_unique<LlmMutator>(config, std::move(client), std::move(context));
}

}  // namespace kestrel
