// Confirmation (EVALUATION.md): one fast timing is not a new best. A result
// faster than the incumbent is re-measured `confirm.rounds` times, each round
// the challenger then the incumbent, so that both see the same machine; the
// challenger becomes the best only when its median speedup beats the
// incumbent's by more than the noise the two show:
//
//   S_c = the challenger's first result and its measured re-measurements
//   S_i = the incumbent's speedup so far (one value) and its re-measurements
//   noise = max( (max S_c - min S_c) / median S_c, (max S_i - min S_i) / median S_i )
//   new best  <=>  median S_c > median S_i * (1 + noise)
//
// Either way each re-measured node's speedup (the store's and the graph's)
// becomes the median of all its measured results. At the end of a run that
// evaluated something (and was not interrupted) the top `confirm.top`
// candidates and the incumbent are re-measured `rounds` times together, in
// turns, and the best is the highest median of those that measured every
// time. A node that failed a re-measurement (in its round or at the end) is
// 'unstable' and never the best. Re-measurements are stored with purpose
// 'confirm' and count for no budget.

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "search/engine/engine_impl.h"

namespace kestrel {
namespace {

double Median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

// (max - min) / median; 0 for fewer than two values.
double Noise(const std::vector<double>& values) {
  if (values.size() < 2) return 0.0;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const double median = Median(values);
  return median > 0 ? (*hi - *lo) / median : 0.0;
}

// The measured speedups `node` got in `measurements`, after `first`.
std::vector<double> Speedups(NodeId node, std::optional<double> first,
                             const std::vector<std::pair<NodeId, Measurement>>& measurements) {
  std::vector<double> speedups;
  if (first) speedups.push_back(*first);
  for (const auto& [id, measurement] : measurements) {
    if (id == node && measurement.outcome == Outcome::kMeasured) speedups.push_back(measurement.speedup);
  }
  return speedups;
}

}  // namespace

std::optional<Engine::Impl::Job> Engine::Impl::IncumbentJobLocked(NodeId challenger, double speedup) {
  if (config_.confirm.rounds <= 0 || incumbent_ == 0 || incumbent_ == challenger) return std::nullopt;
  const auto incumbent_speedup = graph_.Node(incumbent_).speedup;
  if (!incumbent_speedup || speedup <= *incumbent_speedup) return std::nullopt;
  if (stop_reason_ && stop_reason_->kind != StopKind::kEvaluations) return std::nullopt;
  return JobFor(incumbent_);
}

void Engine::Impl::Confirm(Event& event) {
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
  }
}

std::optional<std::map<std::int64_t, double>> Engine::Impl::StoreRoundLocked(
    const std::vector<ConfirmationRecord>& verdicts, const std::vector<std::pair<NodeId, Measurement>>& measurements) {
  if (verdicts.empty() && measurements.empty()) return std::map<std::int64_t, double>{};
  auto medians = store_.RecordConfirmation(options_.run_id, options_.host_id, verdicts, measurements);
  if (!medians) {
    Fatal(medians.error());
    return std::nullopt;
  }
  for (const auto& [id, median] : *medians) graph_.SetResult(id, NodeStatus::kMeasured, median);
  return std::move(*medians);
}

bool Engine::Impl::JudgeLocked(const Event& event) {
  const NodeId node = event.job.node;
  const double speedup = event.measurement.speedup;
  const std::optional<double> incumbent_speedup =
      incumbent_ != 0 && incumbent_ != node ? graph_.Node(incumbent_).speedup : std::nullopt;
  if (!incumbent_speedup) {
    // Nothing to beat: no incumbent yet, or it failed a later evaluation.
    // A round measured against one that was replaced since is stored as is.
    if (!StoreRoundLocked({}, event.confirmations)) return false;
    incumbent_ = node;
    return true;
  }
  if (speedup <= *incumbent_speedup) {
    // The round was against an incumbent that a faster result replaced while
    // it ran: this result challenges nobody now, but its re-measurements are kept.
    (void)StoreRoundLocked({}, event.confirmations);
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
  const std::vector<double> challenger = Speedups(node, speedup, event.confirmations);
  const std::vector<double> holder = Speedups(incumbent_, incumbent_speedup, event.confirmations);
  ConfirmationRecord record;
  record.run_id = options_.run_id;
  record.host_id = options_.host_id;
  record.node_id = node;
  record.against_id = incumbent_;
  record.node_median = Median(challenger);
  record.against_median = Median(holder);
  record.noise = std::max(Noise(challenger), Noise(holder));
  record.samples = static_cast<int>(challenger.size());
  // A challenger that failed a re-measurement is not confirmed, whatever its median.
  const bool all_measured = challenger.size() == 1 + static_cast<std::size_t>(std::count_if(
                                event.confirmations.begin(), event.confirmations.end(),
                                [node](const auto& entry) { return entry.first == node; }));
  const bool beats = all_measured && record.node_median > record.against_median * (1.0 + record.noise);
  record.verdict = beats ? "confirmed" : all_measured ? "within_noise" : "unstable";
  if (!StoreRoundLocked({record}, event.confirmations)) return false;
  if (beats) {
    incumbent_ = node;
    return true;
  }
  const std::string note = fmt::format(
      "kestrel: node {} ({:.2f}x, median of {}) is within the noise ({:.1f}%) of the best, node {} ({:.2f}x): "
      "not a new best",
      node, record.node_median, record.samples, 100.0 * record.noise, record.against_id, record.against_median);
  progress_.Event(note);
  (void)store_.AddRunEvent(options_.run_id, "not_confirmed",
                           nlohmann::json{{"node", node},
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
    std::vector<Job> jobs;
    {
      std::lock_guard lock(mutex_);
      if (config_.confirm.top <= 0 || config_.confirm.rounds <= 0) return;
      if (stop_reason_ && (stop_reason_->kind == StopKind::kSignal || stop_reason_->kind == StopKind::kError)) return;
      if (summary_.evaluations == 0) return;  // nothing new since the last confirmation
      std::vector<NodeId> top = graph_.Best(static_cast<std::size_t>(config_.confirm.top) + unstable.size());
      if (pass == 0 && incumbent_ != 0 && std::find(top.begin(), top.end(), incumbent_) == top.end()) {
        top.push_back(incumbent_);
      }
      for (const NodeId node : top) {
        if (done.insert(node).second) jobs.push_back(JobFor(node));
      }
    }
    if (jobs.empty()) break;
    progress_.Event(fmt::format("kestrel: confirming {} {} ({} re-measurements each)", pass == 0 ? "the top" : "another",
                                jobs.size(), config_.confirm.rounds));
    std::vector<Job> built;
    for (Job& job : jobs) {
      job.build = evaluator_.Build(job.candidate);
      if (job.build.ok) built.push_back(std::move(job));
    }
    std::vector<std::pair<NodeId, Measurement>> measurements;
    for (int round = 0; round < config_.confirm.rounds; ++round) {
      for (const Job& job : built) {
        {
          std::lock_guard lock(mutex_);
          if (stop_reason_ && stop_reason_->kind == StopKind::kSignal) return;  // interrupted: nothing half-judged is stored
        }
        measurements.emplace_back(job.node, evaluator_.Measure(job.candidate, job.build));
      }
    }
    std::lock_guard lock(mutex_);
    std::vector<ConfirmationRecord> records;
    for (const Job& job : built) {
      const std::vector<double> speedups = Speedups(job.node, graph_.Node(job.node).speedup, measurements);
      if (speedups.empty()) continue;
      const auto failed = std::count_if(measurements.begin(), measurements.end(), [&job](const auto& entry) {
        return entry.first == job.node && entry.second.outcome != Outcome::kMeasured;
      });
      ConfirmationRecord record;
      record.run_id = options_.run_id;
      record.host_id = options_.host_id;
      record.node_id = job.node;
      // A kernel that fails a re-measurement (wrong once, crashed once) is not
      // trusted as the best, however fast it was.
      record.verdict = failed > 0 ? "unstable" : "final";
      record.node_median = Median(speedups);
      record.noise = Noise(speedups);
      record.samples = static_cast<int>(speedups.size());
      records.push_back(record);
      if (failed > 0) unstable.insert(job.node);
    }
    const auto medians = StoreRoundLocked(records, measurements);
    if (!medians) return;
    for (const auto& [node, median] : *medians) all_medians[node] = median;
    for (const ConfirmationRecord& record : records) {
      const auto median = medians->find(record.node_id);
      progress_.Event(fmt::format("kestrel: node {}: {:.2f}x (median of all its results; this round spread {:.1f}%){}",
                                  record.node_id, median == medians->end() ? record.node_median : median->second,
                                  100.0 * record.noise,
                                  record.verdict == "unstable" ? ", UNSTABLE: a re-measurement failed" : ""));
    }
  }
  std::lock_guard lock(mutex_);
  // The best is the highest median over all of a node's results, unstable nodes aside.
  NodeId best = 0;
  double best_median = 0.0;
  for (const auto& [node, median] : all_medians) {
    if (!unstable.contains(node) && median > best_median) {
      best = node;
      best_median = median;
    }
  }
  if (best != incumbent_ && best != 0) {
    incumbent_ = best;
    (void)store_.AddRunEvent(options_.run_id, "new_best",
                             nlohmann::json{{"node", best}, {"speedup", best_median}, {"final", true}}.dump());
  }
}

}  // namespace kestrel
