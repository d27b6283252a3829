#include "search/mutators/paid_call.h"

#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "search/engine/budget.h"
#include "search/run_config.h"

namespace kestrel {
namespace {

std::string MessagesJson(const LlmRequest& request) {
  nlohmann::json messages = nlohmann::json::array();
  if (!request.system.empty()) messages.push_back({{"role", "system"}, {"content", request.system}});
  for (const LlmMessage& message : request.messages) {
    messages.push_back({{"role", message.role}, {"content", message.content}});
  }
  return JsonText(messages);
}

// Reserves `estimate`; when the calls in flight hold the rest, waits for one
// to settle and tries once more. Declining at once instead would have the
// engine select again at once: a spin of declines while the calls are out.
Reservation ReserveRoom(Budget& budget, double estimate, const std::function<bool()>& cancelled) {
  const Reservation first = budget.Reserve(estimate);
  if (!first.held()) return first;
  budget.AwaitSettle(first, cancelled);
  if (cancelled && cancelled()) return first;
  return budget.Reserve(estimate);
}

}  // namespace

PaidCall MakePaidCall(LlmClient& client, Budget& budget, const MutatorConfig& config, const LlmRequest& request,
                      const std::string& purpose, std::function<bool()> cancelled) {
  PaidCall paid;
  std::size_t prompt_chars = request.system.size();
  for (const LlmMessage& message : request.messages) prompt_chars += message.content.size();
  const double estimate = (static_cast<double>(prompt_chars) / 4.0 * config.price_input_per_mtok +
                           static_cast<double>(request.max_tokens) * config.price_output_per_mtok) /
                          1e6;
  const Reservation reservation = ReserveRoom(budget, estimate, cancelled);
  if (!reservation) {
    paid.budget_spent = reservation.spent();
    return paid;
  }
  LlmRequest cancellable = request;
  cancellable.cancelled = std::move(cancelled);
  paid.made = true;
  paid.response = client.Complete(cancellable);
  budget.Settle(estimate, paid.response.cost_usd);

  LlmCallRecord& call = paid.record;
  const LlmResponse& response = paid.response;
  call.provider = client.provider();
  call.model = client.model();
  call.prompt = MessagesJson(request);
  call.response = response.text;
  call.input_tokens = response.input_tokens;
  call.output_tokens = response.output_tokens;
  call.cost_usd = response.cost_usd;
  call.latency_s = response.latency_s;
  call.http_status = response.http_status;
  call.retries = response.retries;
  call.error = response.error;
  if (!response.ok() && call.error.empty()) call.error = std::string(ToString(response.kind));
  call.purpose = purpose;
  return paid;
}

}  // namespace kestrel
