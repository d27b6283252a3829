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

class CostModel {
 public:
  CostModel();
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
  void* booster_ = nullptr;  // BoosterHandle
};

}  // namespace kestrel
