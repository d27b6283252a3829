// Hidden shapes (core/hidden_shapes.h, EVALUATION.md): before a result
// counts as confirmed it is checked on shapes drawn from the task's
// shape_ranges with a fresh input seed. Two places: the measure stage
// checks a result that would challenge the incumbent (the first result
// too) before its confirmation round; the final confirmation checks the
// top candidates this session has not checked (a node measured below the
// best can rise into the top when lucky medians fall). A failure makes the
// node `wrong` ("hidden shape: ..."); the drawn sizes are kept in the
// `hidden_shape` run event only, never in a message a prompt may quote.
// Each check's seed mixes the run's seed with the node, so a resumed run
// draws the same shapes and every node meets shapes of its own.

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/hidden_shapes.h"
#include "core/json_text.h"
#include "search/engine/engine_impl.h"

namespace kestrel {

std::pair<HiddenShapeCheck, std::string> Engine::Impl::RunHiddenCheck(const Job& job) {
  HiddenShapeCheck check =
      evaluator_.CheckHiddenShapes(job.candidate, job.build, HiddenShapeSeed(run_seed_, job.node));
  nlohmann::json shapes = nlohmann::json::array();
  for (const Shape& shape : check.shapes) shapes.push_back(shape);
  nlohmann::json detail{{"node", job.node}, {"shapes", shapes}, {"passed", !check.failure}};
  if (check.failure) detail["verdict"] = std::string(ToString(check.failure->outcome)) + ": " + check.failure->reason;
  if (check.shapes.empty()) detail["note"] = check.note;
  std::lock_guard lock(mutex_);
  hidden_checked_.insert(job.node);
  if (!check.shapes.empty()) ++summary_.hidden_checks;
  if (check.failure) {
    ++summary_.hidden_failures;
    progress_.Event(fmt::format("kestrel: node {} failed a hidden shape: {}", job.node,
                                engine::FirstLine(check.failure->reason)));
  }
  return {std::move(check), JsonText(detail)};
}

void Engine::Impl::CheckHiddenShapes(engine::Measured& event) {
  if (task_.shape_ranges.empty() || event.measurement.outcome != Outcome::kMeasured) return;
  {
    std::lock_guard lock(mutex_);
    const auto incumbent_speedup = incumbent_ != 0 ? graph_.Node(incumbent_).speedup : std::nullopt;
    if (incumbent_speedup && event.measurement.speedup <= *incumbent_speedup) return;
  }
  auto [check, detail] = RunHiddenCheck(event.job);
  event.hidden_event = std::move(detail);
  event.measurement = WithHiddenShapeVerdict(std::move(event.measurement), check);
}

void Engine::Impl::CheckHiddenShapesOfTop(std::vector<Job>& jobs) {
  if (task_.shape_ranges.empty()) return;
  std::vector<Job> kept;
  for (Job& job : jobs) {
    {
      std::lock_guard lock(mutex_);
      if (hidden_checked_.count(job.node) > 0) {
        kept.push_back(std::move(job));
        continue;
      }
    }
    auto [check, detail] = RunHiddenCheck(job);
    std::lock_guard lock(mutex_);
    engine::ChangeNotes notes;
    notes.events.emplace_back("hidden_shape", detail);
    if (!check.failure) {
      (void)store_.AddRunEvent(options_.run_id, "hidden_shape", detail);
      kept.push_back(std::move(job));
      continue;
    }
    if (auto done = state_.SetHiddenShapeFailure(job.node, *check.failure, std::move(notes)); !done) {
      return Fatal(done.error());
    }
    if (incumbent_ == job.node) incumbent_ = 0;  // the final confirmation chooses among the rest
  }
  jobs = std::move(kept);
}

}  // namespace kestrel
