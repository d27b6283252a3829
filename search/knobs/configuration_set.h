#pragma once
// ConfigurationSet: the configurations of one KnobSpace met so far (observed
// or proposed), by their keys (KnobSpace::Key). A space small enough keeps a
// bit per configuration (by KnobSpace::Ordinal): a resumed graph of a million
// nodes enters it without an allocation per node; a larger space keeps the
// keys in a hash set.
//
// Plain data; not thread-safe (the advisor's mutex guards it).

#include <string>
#include <unordered_set>
#include <vector>

namespace kestrel {

class KnobSpace;

class ConfigurationSet {
 public:
  // `space` must outlive the set.
  explicit ConfigurationSet(const KnobSpace& space);

  // True when the key was not in the set yet.
  bool Insert(const std::string& key);
  bool Contains(const std::string& key) const;

 private:
  const KnobSpace& space_;
  std::vector<bool> bits_;  // by ordinal; empty for a space kept in `keys_`
  std::unordered_set<std::string> keys_;
};

}  // namespace kestrel
