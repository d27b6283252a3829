#include "search/knobs/knob_advisor.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/huge_pages.h"
#include "search/knobs/configuration_set.h"
#include "search/knobs/cost_model.h"
#include "search/knobs/knob_space.h"
#include "search/knobs/parzen_estimator.h"

namespace kestrel {
namespace {

constexpr std::size_t kEnumerateLimit = 20000;  // spaces up to this size are ranked whole
constexpr std::size_t kTopKept = 10;            // best configurations kept for crosses and pools
constexpr std::size_t kMinToFit = 3;            // measured configurations before the model is used
constexpr int kTries = 32;                      // draws per randomized technique
constexpr double kModelExploration = 0.05;      // share of draws from the marginals in mode kModel
constexpr std::size_t kMarginalDraws = 24;      // unseen draws from the marginals ranked (Optuna's default)
constexpr double kModelRefinement = 0.2;        // share of one-step moves from the parent in mode kModel
constexpr double kScreenShare = 0.05;           // the origin's steps are screened first when at most this share
constexpr std::size_t kPolishTop = 3;           // polish the neighbourhood of the best, else the 2nd, else the 3rd
constexpr std::size_t kTrainRows = 2304;        // the most rows a fit reads (its cost is bounded at 1e6 nodes)
constexpr std::size_t kTrainBest = 256;         // of them, the fastest; the rest the latest
// Trees of depth 8: a kernel's knobs interact (cumsum_blocked's best needs
// one lane, single accumulation and four rows at once), which depth 5 held
// poorly: over 300 replays of that space, depth 8 halved the runs that took
// more than a fifth of uniform sampling's evaluations to the best (13 to 6
// with exact splits, 7 with histogram ones), the other spaces unchanged
// (docs/BENCHMARKS.md, "Strategy efficiency"). Histogram splits keep a fit
// to kTrainRows rows at 53 ms, where exact ones took 68 ms at depth 5.
constexpr TreeShape kKnobTrees{.depth = 8, .histogram = true};

const std::vector<std::string>& Techniques() {
  static const std::vector<std::string> names = {"model", "step", "multi", "cross", "restart"};
  return names;
}

}  // namespace

struct KnobAdvisor::Space {
  explicit Space(std::vector<KnobSpec> knobs)
      : space(std::move(knobs)), seen(space), marginals(ValueCounts(space)) {}

  static std::vector<std::size_t> ValueCounts(const KnobSpace& space) {
    std::vector<std::size_t> counts;
    for (const KnobSpec& knob : space.knobs()) counts.push_back(knob.values.size());
    return counts;
  }

  // Compact, for graphs of a million nodes: a key (two bytes a knob) and a float.
  struct Observation {
    NodeId node;
    std::string key;
    float speedup;  // 0: failed
  };

  KnobSpace space;
  std::vector<Observation> observed;       // in arrival order
  ConfigurationSet seen;                   // keys of observed and proposed configurations
  std::vector<std::pair<double, KnobValues>> top;  // measured, best first, at most kTopKept
  std::size_t measured = 0;
  // The measured configuration with the lowest node id: a run's seed, the
  // centre of the screen (the same in a resumed run, whatever order results
  // arrived in).
  std::optional<std::pair<NodeId, std::string>> origin;
  CostModel model{kKnobTrees};
  ParzenEstimator marginals;  // which knob values the fastest configurations share
  std::size_t fitted_to = 0;  // observations when the model was fitted
  std::vector<KnobValues> all;  // the whole space, when small enough to rank whole (filled on first use)
  std::vector<float> all_features;

  double Best() const { return top.empty() ? 0.0 : top.front().first; }

  void Add(NodeId node, const KnobValues& knobs, std::optional<double> speedup) {
    AddKey(node, space.Key(knobs), speedup);
  }

  void AddKey(NodeId node, std::string key, std::optional<double> speedup) {
    const bool ok = speedup && *speedup > 0;
    seen.Insert(key);
    marginals.Add(node, key, ok ? static_cast<float>(*speedup) : 0.0f);
    // Grown by doubling as push_back would, in huge pages: a resumed graph's
    // million observations arrive at once.
    if (observed.size() == observed.capacity()) ReserveHuge(observed, std::max<std::size_t>(64, 2 * observed.size()));
    observed.push_back({node, std::move(key), ok ? static_cast<float>(*speedup) : 0.0f});
    if (!ok) return;
    ++measured;
    if (!origin || node < origin->first) origin.emplace(node, observed.back().key);
    // Best first; a tie keeps the earlier one ahead.
    if (top.size() == kTopKept && *speedup <= top.back().first) return;
    const auto later = std::upper_bound(top.begin(), top.end(), *speedup,
                                        [](double value, const auto& entry) { return value > entry.first; });
    top.emplace(later, *speedup, space.FromKey(observed.back().key));
    if (top.size() > kTopKept) top.pop_back();
  }

  // The rows the model is fitted to, in node id order (so the fit does not
  // depend on the order results arrived in): every observation while there
  // are at most kTrainRows, else the kTrainBest fastest and the latest others.
  std::vector<const Observation*> TrainingRows() const {
    std::vector<const Observation*> rows;
    for (const Observation& observation : observed) rows.push_back(&observation);
    const auto by_id = [](const Observation* a, const Observation* b) { return a->node < b->node; };
    if (rows.size() > kTrainRows) {
      const auto faster = [](const Observation* a, const Observation* b) {
        return a->speedup != b->speedup ? a->speedup > b->speedup : a->node < b->node;
      };
      std::nth_element(rows.begin(), rows.begin() + kTrainBest, rows.end(), faster);
      // The latest of the others, picked in linear time (ids are unique):
      // a million rows are not sorted to keep two thousand.
      const auto latest = rows.end() - (kTrainRows - kTrainBest);
      std::nth_element(rows.begin() + kTrainBest, latest, rows.end(), by_id);
      rows.erase(rows.begin() + kTrainBest, latest);
    }
    std::sort(rows.begin(), rows.end(), by_id);
    return rows;
  }

  // Refits when the observations grew by 5% (every new one while few).
  Status Fit() {
    if (measured < kMinToFit) return Fail(Error::NotFound("too few measured configurations"));
    if (model.Fitted() && observed.size() < fitted_to + std::max<std::size_t>(1, fitted_to / 20)) return {};
    const std::vector<const Observation*> training = TrainingRows();
    std::vector<float> rows, speedups;
    for (const Observation* row : training) {
      space.AppendFeatures(row->key, rows);
      speedups.push_back(row->speedup);
    }
    if (auto fitted = model.Fit(rows, space.FeatureCount(), LogSpeedupTargets(speedups)); !fitted) return fitted;
    fitted_to = observed.size();
    return {};
  }

  // The whole space, enumerated once (spaces of up to kEnumerateLimit).
  const std::vector<KnobValues>& All() {
    if (all.empty()) all = space.Enumerate(kEnumerateLimit);
    return all;
  }

  // For a space too large to rank whole: steps, multi-knob moves and crosses
  // of the parent and the best, and uniform draws.
  std::vector<KnobValues> Pool(const KnobValues& parent, std::mt19937_64& rng) const {
    std::vector<KnobValues> pool;
    std::vector<KnobValues> bases{parent};
    for (const auto& [speedup, knobs] : top) bases.push_back(knobs);
    for (const KnobValues& base : bases) {
      for (KnobValues& step : space.Steps(base)) pool.push_back(std::move(step));
      for (int i = 0; i < 10; ++i) pool.push_back(space.MoveSeveral(base, rng));
      for (int i = 0; i < 5; ++i) pool.push_back(space.Cross(base, bases[rng() % bases.size()], rng));
    }
    for (int i = 0; i < 500; ++i) pool.push_back(space.Draw(rng));
    return pool;
  }

  // The origin's one-step moves, when the space is large against them (at
  // most kScreenShare of it): a one-at-a-time screen that shows the model
  // each knob's effect where the author started, before it ranks anything.
  std::vector<KnobValues> Screen() const {
    if (!origin) return {};
    std::vector<KnobValues> steps = space.Steps(space.FromKey(origin->second));
    if (static_cast<double>(steps.size()) > kScreenShare * static_cast<double>(space.Size())) return {};
    return steps;
  }

  // Whether a step of the screen is still unseen.
  bool Screening() const {
    const std::vector<KnobValues> steps = Screen();
    return std::any_of(steps.begin(), steps.end(),
                       [this](const KnobValues& step) { return !seen.Contains(space.Key(step)); });
  }

  // The model's rows for `configs`.
  std::vector<float> FeaturesOf(const std::vector<KnobValues>& configs) const {
    std::vector<float> rows;
    rows.reserve(configs.size() * space.FeatureCount());
    for (const KnobValues& values : configs) space.AppendFeatures(space.Key(values), rows);
    return rows;
  }
};

KnobAdvisor::KnobAdvisor(Mode mode) : mode_(mode), bandit_(Techniques()) {}
KnobAdvisor::~KnobAdvisor() = default;

std::string KnobAdvisor::TechniqueOf(const std::string& mutation) {
  const std::string word = mutation.substr(0, mutation.find_first_of(" :"));
  if (word == "knob") return "step";
  return word == "polish" ? "model" : word;  // the model's move when it has no lead
}

KnobAdvisor::Space* KnobAdvisor::SpaceOf(const std::string& source) {
  const std::size_t key = std::hash<std::string>{}(source);
  auto it = spaces_.find(key);
  if (it == spaces_.end()) {
    auto knobs = ParseKnobs(source);
    std::unique_ptr<Space> space;
    if (knobs && !knobs->empty()) space = std::make_unique<Space>(std::move(*knobs));
    it = spaces_.emplace(key, std::move(space)).first;
  }
  return it->second.get();
}

void KnobAdvisor::Observe(NodeId node, const std::string& source, const KnobValues& knobs,
                          std::optional<double> speedup, const std::string& mutation, bool live) {
  std::lock_guard lock(mutex_);
  Space* space = SpaceOf(source);
  if (space == nullptr) ranker_.Observe(node, source, speedup);
  ObserveLocked(space, node, knobs, speedup, mutation, live);
}

void KnobAdvisor::Observe(NodeId node, const std::shared_ptr<const std::string>& source, const KnobValues& knobs,
                          std::optional<double> speedup, const std::string& mutation, bool live) {
  std::lock_guard lock(mutex_);
  Space* space = SpaceOf(source);
  if (space == nullptr) ranker_.Observe(node, *source, speedup);
  ObserveLocked(space, node, knobs, speedup, mutation, live);
}

std::optional<std::vector<float>> KnobAdvisor::PredictSources(const std::vector<std::string_view>& sources) {
  std::vector<std::string> texts;
  std::vector<std::string_view> views;
  texts.reserve(sources.size());
  for (std::string_view source : sources) {
    auto knobs = ParseKnobs(source);
    texts.push_back(knobs && !knobs->empty() ? SubstituteKnobs(source, DefaultKnobs(*knobs)) : std::string(source));
  }
  for (const std::string& text : texts) views.emplace_back(text);
  return ranker_.Predict(views);  // the ranker's own locks: a fit holds none that Observe needs
}

void KnobAdvisor::ObserveStored(NodeId node, const std::shared_ptr<const std::string>& source,
                                std::string_view knobs_json, std::optional<double> speedup) {
  std::lock_guard lock(mutex_);
  Space* space = SpaceOf(source);
  if (space == nullptr) return;
  if (auto key = space->space.KeyOfStored(knobs_json)) {
    space->AddKey(node, std::move(*key), speedup);
    return;
  }
  KnobValues knobs;  // not as nlohmann writes it: the slow way
  try {
    for (const auto& [name, value] : nlohmann::json::parse(knobs_json).items()) knobs[name] = value.get<std::string>();
  } catch (const nlohmann::json::exception&) {
    return;  // unreadable knobs say nothing about the space
  }
  space->Add(node, knobs, speedup);
}

KnobAdvisor::Space* KnobAdvisor::SpaceOf(const std::shared_ptr<const std::string>& source) {
  auto it = by_address_.find(source.get());
  if (it == by_address_.end()) it = by_address_.emplace(source.get(), std::make_pair(source, SpaceOf(*source))).first;
  return it->second.second;
}

void KnobAdvisor::ObserveLocked(Space* space, NodeId node, const KnobValues& knobs, std::optional<double> speedup,
                                const std::string& mutation, bool live) {
  if (space == nullptr) return;
  const bool improved = speedup && *speedup > space->Best();
  space->Add(node, knobs, speedup);
  if (live) bandit_.Record(TechniqueOf(mutation), improved);
}

std::vector<KnobAdvisor::Advice> KnobAdvisor::Try(const std::string& technique, Space& space,
                                                  const KnobValues& parent, std::mt19937_64& rng) {
  const KnobSpace& knobs = space.space;
  std::vector<Advice> found;
  std::unordered_set<std::string> keys;  // no configuration twice in `found`
  const auto add = [&](const KnobValues& to, const std::string& what) {
    const std::string key = knobs.Key(to);
    if (space.seen.Contains(key) || !keys.insert(key).second) return;
    found.push_back({to, what + knobs.Describe(parent, to)});
  };
  if (technique == "screen") {
    auto steps = space.Screen();
    std::shuffle(steps.begin(), steps.end(), rng);
    for (const KnobValues& step : steps) add(step, "screen: ");
  } else if (technique == "step") {
    auto steps = knobs.Steps(parent);
    std::shuffle(steps.begin(), steps.end(), rng);
    for (const KnobValues& step : steps) add(step, "knob ");
  } else if (technique == "multi") {
    for (int i = 0; i < kTries; ++i) add(knobs.MoveSeveral(parent, rng), "multi: ");
  } else if (technique == "cross") {
    std::vector<const KnobValues*> partners;
    for (const auto& [speedup, other] : space.top) {
      if (other != parent) partners.push_back(&other);
    }
    for (int i = 0; !partners.empty() && i < kTries; ++i) {
      const KnobValues& partner = *partners[rng() % partners.size()];
      add(knobs.Cross(parent, partner, rng), "cross with " + ToString(partner) + ": ");
    }
  } else if (technique == "restart") {
    // 16 unseen draws (of at most 64), farthest first: each judged by its
    // nearest neighbour among the latest 2000 observations.
    std::vector<std::pair<std::size_t, KnobValues>> draws;
    for (int i = 0; i < 4 * 16 && draws.size() < 16; ++i) {
      KnobValues draw = knobs.Draw(rng);
      const std::string key = knobs.Key(draw);
      if (space.seen.Contains(key)) continue;
      std::size_t nearest = knobs.knobs().size();
      std::size_t compared = 0;
      for (auto it = space.observed.rbegin(); it != space.observed.rend() && nearest > 0 && compared < 2000;
           ++it, ++compared) {
        nearest = std::min(nearest, KnobSpace::Distance(key, it->key));
      }
      draws.emplace_back(nearest, std::move(draw));
    }
    std::stable_sort(draws.begin(), draws.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [distance, draw] : draws) add(draw, "restart: ");
    // Draws that keep hitting seen configurations: a small space nearly
    // covered; its first unseen configurations, if any.
    if (draws.empty() && knobs.Size() <= kEnumerateLimit) {
      const std::vector<KnobValues>& all = space.All();
      for (std::size_t i = 0; i < all.size() && found.size() < 16; ++i) add(all[i], "restart: ");
    }
  } else if (technique == "marginals") {
    // Unseen draws from the fastest configurations' knob values, the likeliest
    // to be good (by l/g) first.
    std::vector<ParzenEstimator::Draw> unseen;
    std::unordered_set<std::string> drawn;
    for (ParzenEstimator::Draw& draw : space.marginals.Sample(4 * kMarginalDraws, rng)) {
      if (unseen.size() == kMarginalDraws) break;
      if (space.seen.Contains(draw.key) || !drawn.insert(draw.key).second) continue;
      unseen.push_back(std::move(draw));
    }
    std::stable_sort(unseen.begin(), unseen.end(), [](const auto& a, const auto& b) { return a.score > b.score; });
    for (const ParzenEstimator::Draw& draw : unseen) {
      add(knobs.FromKey(draw.key), fmt::format("marginals (odds {:.1f}): ", std::exp(draw.score)));
    }
  } else if (technique == "model") {
    if (!space.Fit()) return {};
    const bool whole = knobs.Size() <= kEnumerateLimit;
    const std::vector<KnobValues> pool = whole ? std::vector<KnobValues>{} : space.Pool(parent, rng);
    const std::vector<KnobValues>& ranked = whole ? space.All() : pool;
    if (whole && space.all_features.empty()) space.all_features = space.FeaturesOf(ranked);
    auto predicted = space.model.Predict(whole ? space.all_features : space.FeaturesOf(pool), knobs.FeatureCount());
    if (!predicted) return {};
    std::vector<std::pair<float, std::size_t>> order;
    std::uniform_real_distribution<float> jitter(0.0f, 1e-6f);  // ties (a leaf shared) broken at random
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      if (!space.seen.Contains(knobs.Key(ranked[i]))) order.emplace_back((*predicted)[i] + jitter(rng), i);
    }
    std::sort(order.begin(), order.end(), std::greater<>());
    // Nothing unseen is expected to beat the best measured: the model has
    // no lead, so search the best's neighbourhood instead of its guess.
    if (!order.empty() && !space.top.empty() && std::exp(order.front().first) < space.Best()) {
      found = Polish(space, parent);
      if (!found.empty()) return found;
    }
    for (std::size_t r = 0; r < order.size() && found.size() < 64; ++r) {
      const auto& [score, i] = order[r];
      // Says what the model expected, for lineage and for judging the model.
      add(ranked[i], fmt::format("model ({:.2f}x predicted): ", std::exp((*predicted)[i])));
    }
  }
  return found;
}

std::vector<KnobAdvisor::Advice> KnobAdvisor::Polish(Space& space, const KnobValues& parent) {
  const KnobSpace& knobs = space.space;
  for (std::size_t t = 0; t < kPolishTop && t < space.top.size(); ++t) {
    std::vector<KnobValues> moves;
    for (KnobValues& move : knobs.Neighbourhood(space.top[t].second)) {
      if (!space.seen.Contains(knobs.Key(move))) moves.push_back(std::move(move));
    }
    if (moves.empty()) continue;
    auto predicted = space.model.Predict(space.FeaturesOf(moves), knobs.FeatureCount());
    if (!predicted) return {};
    std::vector<std::size_t> order(moves.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return (*predicted)[a] > (*predicted)[b]; });
    std::vector<Advice> found;
    for (std::size_t i : order) {
      found.push_back({moves[i], fmt::format("polish ({:.2f}x predicted): ", std::exp((*predicted)[i])) +
                                     knobs.Describe(parent, moves[i])});
    }
    return found;
  }
  return {};
}

std::optional<KnobAdvisor::Advice> KnobAdvisor::Propose(const std::string& source, const KnobValues& parent_knobs,
                                                        std::mt19937_64& rng,
                                                        const std::function<bool(const KnobValues&)>& is_known) {
  for (;;) {
    std::vector<Advice> candidates;
    {
      std::lock_guard lock(mutex_);
      Space* space = SpaceOf(source);
      if (space == nullptr) return std::nullopt;
      const KnobValues parent = space->space.Complete(parent_knobs);
      std::string first;
      if (mode_ == Mode::kPortfolio) {
        first = bandit_.Choose();
      } else {
        std::uniform_real_distribution<double> draw(0.0, 1.0);
        const double r = draw(rng);
        first = space->Screening()                           ? "screen"
                : space->measured < kMinToFit                ? "restart"
                : r < kModelExploration                      ? "marginals"
                : r < kModelExploration + kModelRefinement    ? "step"
                                                              : "model";
      }
      std::vector<std::string> order{first};
      for (const char* other : {"model", "restart", "multi", "cross", "step"}) {
        if (other != first) order.push_back(other);
      }
      for (const std::string& technique : order) {
        candidates = Try(technique, *space, parent, rng);
        if (!candidates.empty()) break;
      }
      if (candidates.empty()) return std::nullopt;
    }
    // is_known takes the engine's lock, which the engine holds while it
    // calls Observe and Save: never call it under the advisor's.
    std::vector<KnobValues> known;
    std::optional<Advice> chosen;
    for (Advice& candidate : candidates) {
      if (!is_known(candidate.knobs)) {
        chosen = std::move(candidate);
        break;
      }
      known.push_back(candidate.knobs);
    }
    std::lock_guard lock(mutex_);
    Space* space = SpaceOf(source);
    for (const KnobValues& values : known) space->seen.Insert(space->space.Key(values));
    // Another proposal may have taken it meanwhile; then the next round
    // (each round marks at least one more configuration seen).
    if (chosen && space->seen.Insert(space->space.Key(chosen->knobs))) return chosen;
  }
}

nlohmann::json KnobAdvisor::Save() const {
  std::lock_guard lock(mutex_);
  return {{"bandit", bandit_.Save()}};
}

Status KnobAdvisor::Restore(const nlohmann::json& saved) {
  std::lock_guard lock(mutex_);
  if (!saved.is_object() || !saved.contains("bandit") || saved.size() != 1) {
    return Fail(Error::InvalidArgument("knob advisor state: expected {\"bandit\": [...]}, got " +
                                       saved.dump().substr(0, 120)));
  }
  return bandit_.Restore(saved.at("bandit"));
}

}  // namespace kestrel
