// Confirmation (EVALUATION.md): one fast timing is not a new best. A result
// faster than the incumbent is re-measured `confirm.rounds` times, each round
// the challenger then the incumbent, so that both see the same machine, and
// judged by the confirmation rule (confirmation_rule.h). Either way each
// re-measured node's speedup (the store's and the graph's) becomes the median
// of all its measured results. At the end of a run that evaluated something
// (and was not interrupted) the top `confirm.top` candidates and the
// incumbent are re-measured `rounds` times together, in turns, and the best
// is the highest median of those that measured every time. Re-measurements
// are stored with purpose 'confirm' and count for no budget.

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "search/engine/confirmation_rule.h"
#include "search/engine/engine_impl.h"
#include "core/stop.h"

namespace kestrel {

std::optional<Engine::Impl::Job> Engine::Impl::IncumbentJobLocked(NodeId challenger, double speedup) {
  if (config_.confirm.rounds <= 0 || incumbent_ == 0 || incumbent_ == challenger) return std::nullopt;
  const auto incumbent_speedup = graph_.Node(incumbent_).speedup;
  if (!incumbent_speedup || speedup <= *incumbent_speedup) return std::nullopt;
  if (stop_reason_ && stop_reason_->kind != StopKind::kEvaluations) return std::nullopt;
  return JobFor(incumbent_);
}

void Engine::Impl::Confirm(engine::Measured& event) {
  if (event.measurement.outcome != Outcome::kMeasured) return;
  std::optional<Job> incumbent;
  {
    std::lock_guard lock(mutex_);
    incumbent = IncumbentJobLocked(event.job.node, event.measurement.speedup);
  }
  if (!incumbent) return;
  incumbent->build = evaluator_.Build(incumbent->candidate);  // cached when this process built it
  if (!incumbent->build.ok) return;                            // judged without a round
  for (int round = 0; round < config_.confirm.rounds; ++round) {
    {
      std::lock_guard lock(mutex_);
      if (stop_reason_ && stop_reason_->kind != StopKind::kEvaluations) break;
    }
    event.confirmations.emplace_back(event.job.node, evaluator_.Measure(event.job.candidate, event.job.build));
    event.confirmations.emplace_back(incumbent->node, evaluator_.Measure(incumbent->candidate, incumbent->build));
    if (event.confirmations.back().second.withdrawn || event.confirmations.rbegin()[1].second.withdrawn) {
      event.confirmations.resize(event.confirmations.size() - 2);  // withdrawn at a stop: not a round
      break;
    }
  }
}

bool Engine::Impl::JudgeLocked(const engine::Measured& event, engine::ConfirmationRound& round,
                               std::vector<std::pair<std::string, std::string>>& events) {
  round.measurements = event.confirmations;
  const NodeId node = event.job.node;
  const double speedup = event.measurement.speedup;
  const std::optional<double> incumbent_speedup =
      incumbent_ != 0 && incumbent_ != node ? graph_.Node(incumbent_).speedup : std::nullopt;
  if (!incumbent_speedup) {
    // Nothing to beat: no incumbent yet, or it failed a later evaluation.
    // A round measured against one that was replaced since is stored as is.
    incumbent_ = node;
    return true;
  }
  if (speedup <= *incumbent_speedup) {
    // The round was against an incumbent that a faster result replaced while
    // it ran: this result challenges nobody now, but its re-measurements are kept.
    return false;
  }
  if (event.confirmations.empty()) {
    // No round (confirmation off, the incumbent no longer builds, or the run
    // is stopping): the faster result is the best, unconfirmed.
    incumbent_ = node;
    return true;
  }
  // When another result became the incumbent while the round ran, the
  // challenger's re-measurements are judged against that one's speedup (and
  // the old incumbent's are stored all the same).
  ConfirmationRecord record = JudgeRound(node, speedup, incumbent_, *incumbent_speedup, event.confirmations);
  record.run_id = options_.run_id;
  record.host_id = options_.host_id;
  round.verdicts.push_back(record);
  if (record.verdict == ConfirmationVerdict::kConfirmed) {
    incumbent_ = node;
    return true;
  }
  const std::string note = fmt::format(
      "kestrel: node {} ({:.2f}x, median of {}) is within the noise ({:.1f}%) of the best, node {} ({:.2f}x): "
      "not a new best",
      node, record.node_median, record.samples, 100.0 * record.noise, record.against_id, record.against_median);
  progress_.Event(note);
  events.emplace_back("not_confirmed", nlohmann::json{{"node", node},
                                                      {"median", record.node_median},
                                                      {"against", record.against_id},
                                                      {"against_median", record.against_median},
                                                      {"noise", record.noise}}
                                            .dump());
  return false;
}

void Engine::Impl::FinalConfirmation() {
  // Re-measuring the top candidates lowers the lucky ones' medians, which can
  // lift a node measured once into the top: it is re-measured in turn, until
  // the top `confirm.top` are all confirmed (a few passes at most).
  constexpr int kMaxPasses = 3;
  std::set<NodeId> done;
  std::set<NodeId> unstable;
  std::map<NodeId, double> all_medians;
  for (int pass = 0; pass < kMaxPasses; ++pass) {
    // The top candidates not yet judged, built and checked on hidden shapes
    // (engine_hidden.cc); a failure there takes its place in the top, so the
    // next candidate is taken in the same pass.
    std::vector<Job> built;
    for (bool refill = true; refill;) {
      std::vector<Job> jobs;
      {
        std::lock_guard lock(mutex_);
        if (config_.confirm.top <= 0 || config_.confirm.rounds <= 0) return;
        if (stop_reason_ && (stop_reason_->kind == StopKind::kSignal || stop_reason_->kind == StopKind::kError)) return;
        if (StopRequested()) return;  // a signal after the search stopped for its budget
        // Nothing new since the last final confirmation that ended (one a
        // SIGKILL cut short is done again by the resumed run).
        if (RunEvaluationsLocked() <= confirmed_through_) return;
        // Same-code copies are not re-measured: their code is their twin's, timed as itself.
        std::vector<NodeId> top = BestTimedLocked(static_cast<std::size_t>(config_.confirm.top) + unstable.size());
        if (pass == 0 && incumbent_ != 0 && std::find(top.begin(), top.end(), incumbent_) == top.end()) {
          top.push_back(incumbent_);
        }
        for (const NodeId node : top) {
          if (done.insert(node).second) jobs.push_back(JobFor(node));
        }
      }
      std::vector<Job> fresh;
      for (Job& job : jobs) {
        job.build = evaluator_.Build(job.candidate);
        if (job.build.ok) fresh.push_back(std::move(job));
      }
      const std::size_t before = fresh.size();
      CheckHiddenShapesOfTop(fresh);
      refill = fresh.size() < before;
      for (Job& job : fresh) built.push_back(std::move(job));
    }
    {
      std::lock_guard lock(mutex_);
      if (stop_reason_ && stop_reason_->kind == StopKind::kError) return;
    }
    if (built.empty()) break;
    progress_.Event(fmt::format("kestrel: confirming {} {} ({} re-measurements each)", pass == 0 ? "the top" : "another",
                                built.size(), config_.confirm.rounds));
    std::vector<std::pair<NodeId, Measurement>> measurements;
    for (int round = 0; round < config_.confirm.rounds; ++round) {
      for (const Job& job : built) {
        {
          std::lock_guard lock(mutex_);
          // Interrupted (also by a signal after a budget stopped the search):
          // nothing half-judged is stored.
          if ((stop_reason_ && stop_reason_->kind == StopKind::kSignal) || StopRequested()) return;
        }
        measurements.emplace_back(job.node, evaluator_.Measure(job.candidate, job.build));
        if (measurements.back().second.withdrawn) return;  // withdrawn at a stop: nothing half-judged either
      }
    }
    std::lock_guard lock(mutex_);
    std::vector<ConfirmationRecord> records;
    for (const Job& job : built) {
      std::optional<ConfirmationRecord> record = JudgeFinal(job.node, graph_.Node(job.node).speedup, measurements);
      if (!record) continue;
      record->run_id = options_.run_id;
      record->host_id = options_.host_id;
      if (record->verdict == ConfirmationVerdict::kUnstable) unstable.insert(job.node);
      records.push_back(*record);
    }
    auto medians = state_.AddRound({records, measurements}, {});
    if (!medians) return Fatal(medians.error());
    for (const auto& [node, median] : *medians) all_medians[node] = median;
    for (const ConfirmationRecord& record : records) {
      const auto median = medians->find(record.node_id);
      progress_.Event(fmt::format("kestrel: node {}: {:.2f}x (median of all its results; this round spread {:.1f}%){}",
                                  record.node_id, median == medians->end() ? record.node_median : median->second,
                                  100.0 * record.noise,
                                  record.verdict == ConfirmationVerdict::kUnstable ? ", UNSTABLE: a re-measurement failed" : ""));
    }
  }
  std::lock_guard lock(mutex_);
  // The best is the highest median over all of a node's results, unstable nodes aside.
  const NodeId best = ChooseBest(all_medians, unstable);
  engine::ChangeNotes notes;
  if (best != incumbent_ && best != 0) {
    incumbent_ = best;
    notes.events.emplace_back("new_best",
                              nlohmann::json{{"node", best}, {"speedup", all_medians.at(best)}, {"final", true}}.dump());
  }
  // The incumbent chosen here (or demoted by a hidden shape above) is the
  // one a resumed run judges challengers against: saved with the event, and
  // with it that this confirmation ended.
  confirmed_through_ = RunEvaluationsLocked();
  notes.run_state = SaveStateLocked();
  if (auto saved = state_.AddRound({}, std::move(notes)); !saved) return Fatal(saved.error());
}

}  // namespace kestrel
