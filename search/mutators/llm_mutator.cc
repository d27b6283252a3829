#include "search/mutators/llm_mutator.h"

#include <atomic>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "llm/code_block.h"
#include "search/mutators/prompt.h"
#include "search/engine/stop.h"

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
  endpoint.max_concurrency = config.max_concurrency;
  endpoint.price_input_per_mtok = config.price_input_per_mtok;
  endpoint.price_output_per_mtok = config.price_output_per_mtok;
  return endpoint;
}

namespace {

std::string MessagesJson(const LlmRequest& request) {
  nlohmann::json messages = nlohmann::json::array();
  if (!request.system.empty()) messages.push_back({{"role", "system"}, {"content", request.system}});
  for (const LlmMessage& message : request.messages) {
    messages.push_back({{"role", message.role}, {"content", message.content}});
  }
  return messages.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

class LlmMutator final : public Mutator {
 public:
  LlmMutator(const MutatorConfig& config, std::shared_ptr<LlmClient> client, LlmContext context)
      : config_(config), client_(std::move(client)), context_(std::move(context)) {}

  std::string_view Kind() const override { return "llm"; }
  bool WantsContext() const override { return true; }
  bool CanFix() const override { return true; }
  void Cancel() override { cancelled_.store(true); }

  std::optional<Proposal> Propose(const ParentView& parent, std::mt19937_64& rng, const IsKnown& is_known) override {
    return Expand(parent, rng, is_known).proposal;
  }

  MutationResult Expand(const ParentView& parent, std::mt19937_64& rng, const IsKnown& is_known) override {
    // A combine is drawn from the expansion's generator only when one is
    // possible, so a run with combine_share 0 draws what it always did.
    if (config_.combine_share > 0 && !parent.partners.empty() &&
        std::uniform_real_distribution<double>(0.0, 1.0)(rng) < config_.combine_share) {
      const CombinePartner& partner =
          parent.partners[std::uniform_int_distribution<std::size_t>(0, parent.partners.size() - 1)(rng)];
      const LlmRequest request =
          CombinePrompt(*context_.task, {parent.id, parent.candidate, parent.measurement},
                        {partner.id, partner.candidate, partner.measurement}, context_.host, context_.threads,
                        config_.max_tokens, config_.temperature);
      return Call(request, parent.candidate,
                  fmt::format("combine #{} + #{}: llm:{}", parent.id, partner.id, config_.model), EdgeKind::kDerive,
                  is_known);
    }
    const auto& directions = MutationDirections();
    const std::string direction = directions[std::uniform_int_distribution<std::size_t>(0, directions.size() - 1)(rng)];
    MutationPromptInput input;
    input.task = context_.task.get();
    input.parent = parent.candidate;
    input.measurement = parent.measurement;
    input.lineage = parent.lineage;
    input.inspirations = parent.inspirations;
    input.recent_failures = parent.recent_failures;
    input.direction = direction;
    input.host = context_.host;
    input.threads = context_.threads;
    input.max_tokens = config_.max_tokens;
    input.temperature = config_.temperature;
    return Call(MutationPrompt(input), parent.candidate, "llm:" + config_.model + ":" + direction, EdgeKind::kDerive, is_known);
  }

  MutationResult Fix(const ParentView& failed, const Measurement& measurement, const IsKnown& is_known) override {
    const LlmRequest request =
        FixPrompt(*context_.task, failed.candidate, measurement.outcome, measurement.reason, measurement.log,
                  context_.host, context_.threads, config_.max_tokens, config_.temperature);
    return Call(request, failed.candidate, "llm:" + config_.model + ":fix " + std::string(ToString(measurement.outcome)),
                EdgeKind::kFix, is_known);
  }

 private:
  // Sends `request` and turns the reply into a proposal derived from `parent`.
  MutationResult Call(const LlmRequest& request, const Candidate& parent, const std::string& mutation,
                      EdgeKind edge_kind, const IsKnown& is_known) {
    MutationResult result;
    result.exhausted = false;  // a declined call may succeed next time
    if (stopped_.load()) {
      result.exhausted = true;
      return result;
    }
    std::size_t prompt_chars = request.system.size();
    for (const LlmMessage& message : request.messages) prompt_chars += message.content.size();
    const double estimate = (static_cast<double>(prompt_chars) / 4.0 * config_.price_input_per_mtok +
                             static_cast<double>(config_.max_tokens) * config_.price_output_per_mtok) /
                            1e6;
    if (cancelled_.load()) {
      result.note = "llm " + config_.model + ": the run is stopping; no call made";
      return result;
    }
    if (!context_.budget->Reserve(estimate)) {
      result.exhausted = true;
      result.budget_spent = true;
      result.note = fmt::format("llm {}: the usd budget would be exceeded (spent {:.4f})", config_.model,
                                context_.budget->usd_spent());
      return result;
    }
    LlmRequest cancellable = request;
    // A signal or the engine's stop (time, budget) ends the call, not only selection.
    cancellable.cancelled = [this] { return cancelled_.load() || StopRequested(); };
    const LlmResponse response = client_->Complete(cancellable);
    context_.budget->Settle(estimate, response.cost_usd);

    LlmCallRecord call;
    call.provider = client_->provider();
    call.model = client_->model();
    call.prompt = MessagesJson(request);
    call.response = response.text;
    call.input_tokens = response.input_tokens;
    call.output_tokens = response.output_tokens;
    call.cost_usd = response.cost_usd;
    call.latency_s = response.latency_s;
    call.http_status = response.http_status;
    call.retries = response.retries;
    call.error = response.error;

    if (!response.ok()) {
      if (call.error.empty()) call.error = std::string(ToString(response.kind));
      if (StopsMutator(response.kind) && !stopped_.exchange(true)) {
        result.stop_reason = fmt::format("the llm mutator ({} {}) stopped: {}: {}", call.provider, call.model,
                                         ToString(response.kind), call.error);
      }
      result.exhausted = stopped_.load();
      result.note = "llm call failed: " + call.error;
    } else if (response.truncated) {
      call.error = "reply cut at the token limit (finish_reason " + response.finish_reason + "); not compiled";
      result.note = call.error;
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
        // A known identity still goes to the engine: it becomes a duplicate edge.
        (void)is_known;
        result.proposal = std::move(proposal);
      }
    }
    result.calls.push_back(std::move(call));
    return result;
  }

  MutatorConfig config_;
  std::shared_ptr<LlmClient> client_;
  LlmContext context_;
  std::atomic<bool> stopped_{false};
  std::atomic<bool> cancelled_{false};
};

}  // namespace

std::unique_ptr<Mutator> MakeLlmMutator(const MutatorConfig& config, std::shared_ptr<LlmClient> client,
                                        LlmContext context) {
  return std::make_unique<LlmMutator>(config, std::move(client), std::move(context));
}

}  // namespace kestrel
