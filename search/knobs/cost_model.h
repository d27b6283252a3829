#pragma once
// CostModel: a gradient-boosted regression tree ensemble (XGBoost, as TVM's
// MetaSchedule uses) fitted to measured configurations: features -> log
// speedup. Training is deterministic (one thread, no row or column sampling),
// so a resumed run that fits the same rows gets the same model.
//
// Thread-safety: none; KnobAdvisor guards it.

#include <cstddef>
#include <memory>
#include <vector>

#include "core/error.h"

namespace kestrel {

// What a model of log speedup is fitted to, from `speedups` (0: failed): the
// log of each, a failure as twice as slow as the slowest measured one.
std::vector<float> LogSpeedupTargets(const std::vector<float>& speedups);

// The trees' shape. Exact splits at depth 5 by default (the SourceRanker's
// code features); KnobAdvisor asks for deeper trees with histogram splits.
struct TreeShape {
  int depth = 5;
  // Histogram splits (256 bins a feature): the splits exact ones would find
  // when a feature takes at most 256 distinct values, as a knob's do, and
  // faster on thousands of rows.
  bool histogram = false;
};

class CostModel {
 public:
  explicit CostModel(TreeShape shape = {});
  ~CostModel();
  CostModel(const CostModel&) = delete;
  CostModel& operator=(const CostModel&) = delete;

  // Fits a new model to `rows` (row-major, `columns` features each) and
  // their `targets`; replaces the previous one only when XGBoost accepted it.
  Status Fit(const std::vector<float>& rows, std::size_t columns, const std::vector<float>& targets);
  bool Fitted() const { return booster_ != nullptr; }
  // Predicted targets of `rows` (the model must be fitted).
  Result<std::vector<float>> Predict(const std::vector<float>& rows, std::size_t columns) const;

 private:
  TreeShape shape_;
  void* booster_ = nullptr;  // BoosterHandle
};

}  // namespace kestrel
