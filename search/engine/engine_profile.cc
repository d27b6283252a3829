// The engine's profile stage (issue 18, docs/PROFILES.md): a measured node is
// profiled on this host (Evaluator::ProfileBuilt) when it becomes a candidate
// for the best (in the measure stage, after its confirmation round), before
// an LLM mutator expands it (in the mutate stage), and at the end of a run for
// the top of `best` — never for every node, so that profiling stays cheap.
//
// Profiling runs the kernel, so it takes a device slot like a measurement
// (device_slots_): it never overlaps a timing it could disturb beyond what
// the configured measure_slots already allow. A node is profiled once per
// host: the stored profile is reused by later expansions and resumed runs,
// and a second expansion of a node being profiled waits for the first.
// Profiles are stored outside the node's transactions: losing one to a kill
// costs a re-profile, never a result.

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "search/engine/engine_impl.h"

namespace kestrel {
namespace {

// Fills the parent's profile fields from a stored profile.
void FillFromProfile(ParentView& parent, const ProfileRecord& record) {
  parent.profile_digest = record.digest;
  auto json = nlohmann::json::parse(record.profile_json, nullptr, false);
  if (json.is_discarded()) return;
  auto profile = ProfileFromJson(json);
  if (profile && profile->roofline) {
    parent.roofline_fraction = profile->roofline->fraction;
    parent.bound = profile->roofline->bound;
  }
}

}  // namespace

std::optional<ProfileRecord> Engine::Impl::StoredProfileLocked(NodeId node) {
  auto stored = store_.LatestProfile(node, options_.host_id);
  if (!stored) {
    progress_.Event(fmt::format("kestrel: reading node {}'s profile failed: {}", node, stored.error().message()));
    return std::nullopt;
  }
  return std::move(*stored);
}

std::optional<Measurement> Engine::Impl::LatestMeasuredLocked(NodeId node) {
  auto measurements = store_.GetMeasurements(node);
  if (!measurements) return std::nullopt;
  for (auto it = measurements->rbegin(); it != measurements->rend(); ++it) {
    if (it->measurement.outcome == Outcome::kMeasured && it->host_id == options_.host_id) return it->measurement;
  }
  return std::nullopt;
}

std::optional<Profile> Engine::Impl::TakeProfile(const Job& job, const Measurement& measurement) {
  auto profile = evaluator_.ProfileBuilt(job.candidate, job.build, measurement);
  if (!profile) {
    std::lock_guard lock(mutex_);
    progress_.Event(fmt::format("kestrel: profiling node {} failed: {}", job.node, profile.error().message()));
    return std::nullopt;
  }
  return std::move(*profile);
}

std::optional<ProfileRecord> Engine::Impl::StoreProfileLocked(NodeId node, const Profile& profile) {
  ProfileRecord record;
  record.node_id = node;
  record.host_id = options_.host_id;
  record.run_id = options_.run_id;
  record.profile_json = JsonText(ProfileToJson(profile));
  record.digest = ProfileDigest(profile);
  record.seconds = profile.seconds;
  auto id = store_.AddProfile(record);
  if (!id) {
    progress_.Event(fmt::format("kestrel: storing node {}'s profile failed: {}", node, id.error().message()));
    return std::nullopt;
  }
  record.id = *id;
  ++summary_.profiles;
  return record;
}

bool Engine::Impl::ClaimProfileLocked(NodeId node, std::unique_lock<std::mutex>& lock, bool wait) {
  if (!wait && profiling_.contains(node)) return false;
  changed_.wait(lock, [&] { return !profiling_.contains(node); });
  if (profiled_.contains(node)) return false;
  if (StoredProfileLocked(node)) {
    profiled_.insert(node);
    return false;
  }
  profiling_.insert(node);
  return true;
}

void Engine::Impl::ReleaseProfileLocked(NodeId node, bool stored) {
  profiling_.erase(node);
  if (stored) profiled_.insert(node);
  changed_.notify_all();
}

std::optional<Profile> Engine::Impl::ProfileChallenger(const Job& job, const Measurement& measurement) {
  if (!evaluator_.CanProfile() || measurement.outcome != Outcome::kMeasured) return std::nullopt;
  {
    std::unique_lock lock(mutex_);
    if (stop_reason_ && stop_reason_->kind != StopKind::kEvaluations) return std::nullopt;
    const auto best = incumbent_ != 0 ? graph_.Node(incumbent_).speedup : std::nullopt;
    if (best && measurement.speedup <= *best) return std::nullopt;
    // It holds a device slot: never waits for a stage that may want one.
    if (!ClaimProfileLocked(job.node, lock, false)) return std::nullopt;
  }
  // The record stage stores it and releases the claim (RecordLocked(Measured)).
  auto profile = TakeProfile(job, measurement);
  if (!profile) {
    std::lock_guard lock(mutex_);
    ReleaseProfileLocked(job.node, false);
  }
  return profile;
}

void Engine::Impl::ProfileParent(ParentView& parent) {
  if (!evaluator_.CanProfile()) return;
  Job job;
  Measurement measurement;
  {
    std::unique_lock lock(mutex_);
    const GraphNode& node = graph_.Node(parent.id);
    if (node.status != NodeStatus::kMeasured || state_.IsSameCodeCopy(parent.id)) return;
    if (!ClaimProfileLocked(parent.id, lock)) {
      if (auto stored = StoredProfileLocked(parent.id)) FillFromProfile(parent, *stored);
      return;
    }
    auto latest = LatestMeasuredLocked(parent.id);
    if (!latest) {
      ReleaseProfileLocked(parent.id, false);
      return;
    }
    measurement = std::move(*latest);
    job = JobFor(parent.id);
  }
  std::optional<Profile> profile;
  {
    engine::DeviceSlot slot(device_slots_);
    job.build = evaluator_.Build(job.candidate);  // cached when this process built it
    if (job.build.ok) profile = TakeProfile(job, measurement);
  }
  std::lock_guard lock(mutex_);
  std::optional<ProfileRecord> stored = profile ? StoreProfileLocked(parent.id, *profile) : std::nullopt;
  ReleaseProfileLocked(parent.id, stored.has_value());
  if (stored) FillFromProfile(parent, *stored);
}

void Engine::Impl::ProfileTop() {
  if (!evaluator_.CanProfile()) return;
  std::vector<Job> jobs;
  {
    std::unique_lock lock(mutex_);
    if (stop_reason_ && (stop_reason_->kind == StopKind::kSignal || stop_reason_->kind == StopKind::kError)) return;
    if (summary_.evaluations == 0) return;
    const std::size_t top = static_cast<std::size_t>(std::max(1, config_.confirm.top));
    for (const NodeId node : BestTimedLocked(top)) {
      if (ClaimProfileLocked(node, lock)) jobs.push_back(JobFor(node));
    }
  }
  for (Job& job : jobs) {
    std::optional<Measurement> measurement;
    {
      std::lock_guard lock(mutex_);
      if (stop_reason_ && stop_reason_->kind == StopKind::kSignal) {
        ReleaseProfileLocked(job.node, false);
        continue;
      }
      measurement = LatestMeasuredLocked(job.node);
    }
    std::optional<Profile> profile;
    if (measurement) {
      job.build = evaluator_.Build(job.candidate);
      if (job.build.ok) profile = TakeProfile(job, *measurement);
    }
    std::lock_guard lock(mutex_);
    const bool stored = profile && StoreProfileLocked(job.node, *profile).has_value();
    ReleaseProfileLocked(job.node, stored);
  }
}

}  // namespace kestrel
