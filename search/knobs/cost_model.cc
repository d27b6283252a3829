#include "search/knobs/cost_model.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace kestrel {
namespace {

Error XgboostError(const char* what) { return Error::Internal(std::string("xgboost: ") + what + ": " + XGBGetLastError()); }

// Owns a DMatrixHandle.
struct Matrix {
  DMatrixHandle handle = nullptr;
  ~Matrix() {
    if (handle != nullptr) XGDMatrixFree(handle);
  }
};

// Small tables (tens to thousands of rows); the depth and the splits are
// the model's TreeShape.
constexpr int kRounds = 60;
constexpr const char* kParams[][2] = {
    {"objective", "reg:squarederror"}, {"eta", "0.2"}, {"min_child_weight", "1"}, {"subsample", "1"},
    {"lambda", "1"},                   {"nthread", "1"}, {"seed", "0"},           {"verbosity", "0"},
};

}  // namespace

std::vector<float> LogSpeedupTargets(const std::vector<float>& speedups) {
  double worst = INFINITY;
  for (float speedup : speedups) {
    if (speedup > 0) worst = std::min(worst, std::log(static_cast<double>(speedup)));
  }
  if (!std::isfinite(worst)) worst = 0;
  std::vector<float> targets;
  targets.reserve(speedups.size());
  for (float speedup : speedups) {
    targets.push_back(static_cast<float>(speedup > 0 ? std::log(static_cast<double>(speedup)) : worst - std::log(2.0)));
  }
  return targets;
}

CostModel::CostModel(TreeShape shape) : shape_(shape) {}

CostModel::~CostModel() {
  if (booster_ != nullptr) XGBoosterFree(booster_);
}

Status CostModel::Fit(const std::vector<float>& rows, std::size_t columns, const std::vector<float>& targets) {
  if (targets.empty() || rows.size() != targets.size() * columns) {
    return Fail(Error::InvalidArgument("cost model: " + std::to_string(targets.size()) + " targets for " +
                                       std::to_string(rows.size()) + " features"));
  }
  Matrix train;
  if (XGDMatrixCreateFromMat(rows.data(), targets.size(), columns, -1e30f, &train.handle) != 0) {
    return Fail(XgboostError("the training rows"));
  }
  if (XGDMatrixSetFloatInfo(train.handle, "label", targets.data(), targets.size()) != 0) {
    return Fail(XgboostError("the training targets"));
  }
  BoosterHandle booster = nullptr;
  if (XGBoosterCreate(&train.handle, 1, &booster) != 0) return Fail(XgboostError("a booster"));
  for (const auto& [name, value] : kParams) {
    if (XGBoosterSetParam(booster, name, value) != 0) {
      XGBoosterFree(booster);
      return Fail(XgboostError(name));
    }
  }
  const std::string depth = std::to_string(shape_.depth);
  if (XGBoosterSetParam(booster, "max_depth", depth.c_str()) != 0 ||
      XGBoosterSetParam(booster, "tree_method", shape_.histogram ? "hist" : "exact") != 0) {
    XGBoosterFree(booster);
    return Fail(XgboostError("the trees' shape"));
  }
  for (int round = 0; round < kRounds; ++round) {
    if (XGBoosterUpdateOneIter(booster, round, train.handle) != 0) {
      XGBoosterFree(booster);
      return Fail(XgboostError("training"));
    }
  }
  if (booster_ != nullptr) XGBoosterFree(booster_);
  booster_ = booster;
  return {};
}

Result<std::vector<float>> CostModel::Predict(const std::vector<float>& rows, std::size_t columns) const {
  if (booster_ == nullptr) return Fail(Error::Internal("cost model: predicting before any fit"));
  const std::size_t count = columns == 0 ? 0 : rows.size() / columns;
  if (count == 0) return std::vector<float>{};
  Matrix matrix;
  if (XGDMatrixCreateFromMat(rows.data(), count, columns, -1e30f, &matrix.handle) != 0) {
    return Fail(XgboostError("the rows to predict"));
  }
  bst_ulong length = 0;
  const float* predictions = nullptr;
  if (XGBoosterPredict(booster_, matrix.handle, 0, 0, 0, &length, &predictions) != 0) {
    return Fail(XgboostError("prediction"));
  }
  return std::vector<float>(predictions, predictions + length);
}

}  // namespace kestrel
