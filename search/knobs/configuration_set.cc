#include "search/knobs/configuration_set.h"

#include "search/knobs/knob_space.h"

namespace kestrel {
namespace {

// The largest space kept as bits: 8 MiB.
constexpr std::size_t kMaxBits = std::size_t{1} << 26;

}  // namespace

ConfigurationSet::ConfigurationSet(const KnobSpace& space) : space_(space) {
  if (space.Size() <= kMaxBits) bits_.resize(space.Size());
}

bool ConfigurationSet::Insert(const std::string& key) {
  if (bits_.empty()) return keys_.insert(key).second;
  auto bit = bits_[space_.Ordinal(key)];
  if (bit) return false;
  bit = true;
  return true;
}

bool ConfigurationSet::Contains(const std::string& key) const {
  if (bits_.empty()) return keys_.count(key) > 0;
  return bits_[space_.Ordinal(key)];
}

}  // namespace kestrel
