#pragma once
// KnobSpace: the configurations a source's knob declarations allow, and the
// moves between them that the knob search makes (docs/STRATEGIES.md, "Knob
// moves"): one knob one step (the knob mutator's move), several knobs to any
// value, a cross of two configurations, a uniform draw (a restart). Also the
// features a cost model reads from a configuration.
//
// Plain data; every method is const and thread-safe.

#include <cstddef>
#include <random>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/candidate.h"

namespace kestrel {

class KnobSpace {
 public:
  explicit KnobSpace(std::vector<KnobSpec> knobs);

  const std::vector<KnobSpec>& knobs() const { return knobs_; }
  // The number of configurations (saturates at SIZE_MAX).
  std::size_t Size() const { return size_; }
  // `values` completed: a knob it lacks (or holds an undeclared value for)
  // takes its first value.
  KnobValues Complete(const KnobValues& values) const;

  // Every configuration, in declared order (the last knob varies fastest).
  // Only for spaces of at most `limit` configurations; empty otherwise.
  std::vector<KnobValues> Enumerate(std::size_t limit) const;
  // A uniformly drawn configuration.
  KnobValues Draw(std::mt19937_64& rng) const;
  // `from` with between 2 and all knobs (at least 2 when the space has 2)
  // moved to another value each, drawn uniformly.
  KnobValues MoveSeveral(const KnobValues& from, std::mt19937_64& rng) const;
  // Each knob's value from `a` or `b`, drawn evenly (uniform crossover).
  KnobValues Cross(const KnobValues& a, const KnobValues& b, std::mt19937_64& rng) const;
  // The configurations one knob one step away (nearest declared value on either side).
  std::vector<KnobValues> Steps(const KnobValues& from) const;
  // Every configuration that differs from `from` in one knob, to any other
  // value (a coordinate neighbourhood: Steps and the farther values).
  std::vector<KnobValues> Neighbourhood(const KnobValues& from) const;

  // The features of a configuration, two per knob: the value's position in
  // the declared list, and the value itself when every value of the knob is
  // a number (log2 of its magnitude, signed), else the position again.
  std::vector<float> Features(const KnobValues& values) const;
  std::size_t FeatureCount() const { return 2 * knobs_.size(); }

  // A compact key of a configuration (two bytes per knob: its value's
  // position), for keeping many configurations: equal keys, equal
  // configurations. FromKey inverts it; AppendFeatures reads features from it.
  std::string Key(const KnobValues& values) const;
  KnobValues FromKey(const std::string& key) const;
  // The key of knob values as the store keeps them (a JSON object of
  // strings, nodes.knobs_json) without building them: what a graph of a
  // million nodes is read with. nullopt when the text is not such an object.
  std::optional<std::string> KeyOfStored(std::string_view knobs_json) const;
  void AppendFeatures(const std::string& key, std::vector<float>& out) const;
  // The position of a key's configuration in Enumerate's order, below
  // Size() (for a space whose Size() does not saturate).
  std::size_t Ordinal(const std::string& key) const;
  // Knob `knob`'s value position in a key, and setting it.
  static std::size_t IndexAt(const std::string& key, std::size_t knob);
  static void SetIndex(std::string& key, std::size_t knob, std::size_t index);
  // Knobs whose values differ between two keys.
  static std::size_t Distance(const std::string& a, const std::string& b);

  // How `to` differs from `from`: "TILE 64->128, ORDER 0->2" ("" when equal).
  std::string Describe(const KnobValues& from, const KnobValues& to) const;

 private:
  std::size_t IndexOf(std::size_t knob, const KnobValues& values) const;

  std::vector<KnobSpec> knobs_;
  std::vector<std::vector<double>> numeric_;  // per knob: its values as numbers, empty when one is not
  std::size_t size_ = 1;
};

}  // namespace kestrel
