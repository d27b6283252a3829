#include "search/knobs/source_ranker.h"

#include <algorithm>
#include <cmath>

namespace kestrel {

void SourceRanker::Observe(NodeId node, std::string_view source, std::optional<double> speedup) {
  const bool ok = speedup && *speedup > 0 && std::isfinite(*speedup);
  CodeFeatureVector features = CodeFeatures(source);
  std::lock_guard lock(data_mutex_);
  if (observed_.size() == kWindow && node < observed_.front().node) return;
  const auto at = std::lower_bound(observed_.begin(), observed_.end(), node,
                                   [](const Observation& o, NodeId id) { return o.node < id; });
  if (at != observed_.end() && at->node == node) return;
  observed_.insert(at, {node, features, ok ? static_cast<float>(*speedup) : 0.0f});
  if (ok) ++measured_;
  if (observed_.size() > kWindow) {
    if (observed_.front().speedup > 0) --measured_;
    observed_.pop_front();
  }
  ++version_;
}

std::size_t SourceRanker::measured() const {
  std::lock_guard lock(data_mutex_);
  return measured_;
}

bool SourceRanker::FitLocked() {
  // Refits whenever a result arrived (a fit of 2048 rows costs tens of
  // milliseconds, an LLM call seconds), so the model is a function of the
  // observations alone: a resumed run predicts what the live run did. The
  // rows are copied, and the fit made, outside data_mutex_.
  std::vector<float> rows, speedups;
  std::size_t version = 0;
  {
    std::lock_guard lock(data_mutex_);
    if (measured_ < kMinToFit) return false;
    if (model_.Fitted() && version_ == fitted_to_) return true;
    rows.reserve(observed_.size() * kCodeFeatureCount);
    for (const Observation& row : observed_) {
      rows.insert(rows.end(), row.features.begin(), row.features.end());
      speedups.push_back(row.speedup);
    }
    version = version_;
  }
  if (!model_.Fit(rows, kCodeFeatureCount, LogSpeedupTargets(speedups))) return model_.Fitted();
  fitted_to_ = version;
  return true;
}

std::optional<std::vector<float>> SourceRanker::Predict(const std::vector<std::string_view>& sources) {
  std::vector<float> rows;
  rows.reserve(sources.size() * kCodeFeatureCount);
  for (std::string_view source : sources) {
    const CodeFeatureVector features = CodeFeatures(source);
    rows.insert(rows.end(), features.begin(), features.end());
  }
  std::lock_guard lock(model_mutex_);
  if (!FitLocked()) return std::nullopt;
  auto predicted = model_.Predict(rows, kCodeFeatureCount);
  if (!predicted) return std::nullopt;
  return std::move(*predicted);
}

}  // namespace kestrel
