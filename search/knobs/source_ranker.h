#pragma once
// SourceRanker: a cost model over sources without knobs (issue 17). It keeps
// the code features (code_features.h) of every measured or failed node whose
// source declares no knobs, fits a CostModel (XGBoost, as for knob
// configurations) to log speedup, and predicts, for sources not built yet
// (the variants of one LLM reply), which is fastest, so that the most
// promising is built first.
//
// Exact resume: observations are kept by node id, fitted in id order and
// refitted whenever one arrived, so a resumed run that observes the stored
// graph predicts what the live run did.
//
// Thread-safety: every method is safe to call from several threads. A fit
// (tens of milliseconds at kWindow rows) runs on a copy of the rows, outside
// the lock Observe takes: the engine's record stage, which observes with the
// engine's lock held, never waits for one.

#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "graph/search_graph.h"
#include "search/knobs/code_features.h"
#include "search/knobs/cost_model.h"

namespace kestrel {

class SourceRanker {
 public:
  // Measured sources before the model is fitted (code features are weaker
  // than knob values: more rows than a knob space needs).
  static constexpr std::size_t kMinToFit = 6;
  // The observations kept and fitted: the latest (by node id). A resumed
  // run reads only these sources from the store.
  static constexpr std::size_t kWindow = 2048;

  // A node's result (`speedup` nullopt: it failed). A node observed twice
  // keeps its first result; one older than the window is ignored.
  void Observe(NodeId node, std::string_view source, std::optional<double> speedup);

  // Predicted log speedups of `sources`, in their order; nullopt while fewer
  // than kMinToFit sources of the window are measured (or XGBoost refused
  // every fit).
  std::optional<std::vector<float>> Predict(const std::vector<std::string_view>& sources);

  std::size_t measured() const;

 private:
  struct Observation {
    NodeId node;
    CodeFeatureVector features;
    float speedup;  // 0: failed
  };
  // Refits when an observation arrived since the last fit. Holds model_mutex_.
  bool FitLocked();

  mutable std::mutex data_mutex_;  // observed_, measured_, version_
  std::deque<Observation> observed_;  // by node id
  std::size_t measured_ = 0;
  std::size_t version_ = 0;    // observations made
  std::mutex model_mutex_;     // model_, fitted_to_: fits and predictions, one at a time
  CostModel model_;
  std::size_t fitted_to_ = 0;  // version_ when the model was fitted
};

}  // namespace kestrel
