#include "search/knobs/knob_space.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

namespace kestrel {
namespace {

std::vector<double> AsNumbers(const std::vector<std::string>& values) {
  std::vector<double> numbers;
  for (const std::string& value : values) {
    double number = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (error != std::errc() || end != value.data() + value.size()) return {};
    numbers.push_back(number);
  }
  return numbers;
}

}  // namespace

KnobSpace::KnobSpace(std::vector<KnobSpec> knobs) : knobs_(std::move(knobs)) {
  for (const KnobSpec& knob : knobs_) {
    numeric_.push_back(AsNumbers(knob.values));
    const std::size_t count = std::max<std::size_t>(1, knob.values.size());
    size_ = size_ > std::numeric_limits<std::size_t>::max() / count ? std::numeric_limits<std::size_t>::max()
                                                                      : size_ * count;
  }
}

std::size_t KnobSpace::IndexOf(std::size_t knob, const KnobValues& values) const {
  const auto& declared = knobs_[knob].values;
  const auto it = values.find(knobs_[knob].name);
  if (it == values.end()) return 0;
  const auto found = std::find(declared.begin(), declared.end(), it->second);
  return found == declared.end() ? 0 : static_cast<std::size_t>(found - declared.begin());
}

KnobValues KnobSpace::Complete(const KnobValues& values) const {
  KnobValues complete;
  for (std::size_t k = 0; k < knobs_.size(); ++k) complete[knobs_[k].name] = knobs_[k].values[IndexOf(k, values)];
  return complete;
}

std::vector<KnobValues> KnobSpace::Enumerate(std::size_t limit) const {
  if (size_ > limit) return {};
  std::vector<KnobValues> all;
  all.reserve(size_);
  std::vector<std::size_t> index(knobs_.size(), 0);
  for (std::size_t n = 0; n < size_; ++n) {
    KnobValues values;
    for (std::size_t k = 0; k < knobs_.size(); ++k) values[knobs_[k].name] = knobs_[k].values[index[k]];
    all.push_back(std::move(values));
    for (std::size_t k = knobs_.size(); k-- > 0;) {
      if (++index[k] < knobs_[k].values.size()) break;
      index[k] = 0;
    }
  }
  return all;
}

KnobValues KnobSpace::Draw(std::mt19937_64& rng) const {
  KnobValues values;
  for (const KnobSpec& knob : knobs_) {
    std::uniform_int_distribution<std::size_t> pick(0, knob.values.size() - 1);
    values[knob.name] = knob.values[pick(rng)];
  }
  return values;
}

KnobValues KnobSpace::MoveSeveral(const KnobValues& from, std::mt19937_64& rng) const {
  KnobValues to = Complete(from);
  std::vector<std::size_t> movable;
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    if (knobs_[k].values.size() > 1) movable.push_back(k);
  }
  if (movable.empty()) return to;
  std::shuffle(movable.begin(), movable.end(), rng);
  const std::size_t least = std::min<std::size_t>(2, movable.size());
  std::uniform_int_distribution<std::size_t> count(least, movable.size());
  for (std::size_t i = 0, n = count(rng); i < n; ++i) {
    const std::size_t k = movable[i];
    const std::size_t current = IndexOf(k, to);
    // Another value, uniformly: draw among n-1 and skip the current one.
    std::uniform_int_distribution<std::size_t> pick(0, knobs_[k].values.size() - 2);
    std::size_t next = pick(rng);
    if (next >= current) ++next;
    to[knobs_[k].name] = knobs_[k].values[next];
  }
  return to;
}

KnobValues KnobSpace::Cross(const KnobValues& a, const KnobValues& b, std::mt19937_64& rng) const {
  KnobValues child;
  std::bernoulli_distribution from_a(0.5);
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    child[knobs_[k].name] = knobs_[k].values[IndexOf(k, from_a(rng) ? a : b)];
  }
  return child;
}

std::vector<KnobValues> KnobSpace::Steps(const KnobValues& from) const {
  const KnobValues base = Complete(from);
  std::vector<KnobValues> steps;
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    const std::size_t current = IndexOf(k, base);
    for (const std::size_t next : {current - 1, current + 1}) {
      if (next >= knobs_[k].values.size()) continue;  // also catches current - 1 from 0
      KnobValues step = base;
      step[knobs_[k].name] = knobs_[k].values[next];
      steps.push_back(std::move(step));
    }
  }
  return steps;
}

std::vector<KnobValues> KnobSpace::Neighbourhood(const KnobValues& from) const {
  const KnobValues base = Complete(from);
  std::vector<KnobValues> moves;
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    const std::size_t current = IndexOf(k, base);
    for (std::size_t next = 0; next < knobs_[k].values.size(); ++next) {
      if (next == current) continue;
      KnobValues move = base;
      move[knobs_[k].name] = knobs_[k].values[next];
      moves.push_back(std::move(move));
    }
  }
  return moves;
}

std::vector<float> KnobSpace::Features(const KnobValues& values) const {
  std::vector<float> features;
  features.reserve(FeatureCount());
  AppendFeatures(Key(values), features);
  return features;
}

std::string KnobSpace::Key(const KnobValues& values) const {
  std::string key(2 * knobs_.size(), '\0');
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    SetIndex(key, k, IndexOf(k, values));
  }
  return key;
}

std::optional<std::string> KnobSpace::KeyOfStored(std::string_view text) const {
  // {"NAME":"VALUE",...} as nlohmann writes it; a string with an escape is
  // not read here (the caller decodes the JSON instead).
  std::string key(2 * knobs_.size(), '\0');
  std::size_t at = 0;
  const auto skip_spaces = [&] {
    while (at < text.size() && (text[at] == ' ' || text[at] == '\n' || text[at] == '\t' || text[at] == '\r')) ++at;
  };
  const auto expect = [&](char c) {
    skip_spaces();
    if (at >= text.size() || text[at] != c) return false;
    ++at;
    return true;
  };
  const auto string = [&]() -> std::optional<std::string_view> {
    if (!expect('"')) return std::nullopt;
    const std::size_t end = text.find('"', at);
    if (end == std::string_view::npos) return std::nullopt;
    const std::string_view value = text.substr(at, end - at);
    if (value.find('\\') != std::string_view::npos) return std::nullopt;
    at = end + 1;
    return value;
  };
  if (!expect('{')) return std::nullopt;
  skip_spaces();
  if (at < text.size() && text[at] == '}') return at + 1 == text.size() ? std::optional(key) : std::nullopt;
  for (;;) {
    const auto name = string();
    if (!name || !expect(':')) return std::nullopt;
    const auto value = string();
    if (!value) return std::nullopt;
    for (std::size_t k = 0; k < knobs_.size(); ++k) {
      if (knobs_[k].name != *name) continue;
      const auto& declared = knobs_[k].values;
      const auto found = std::find(declared.begin(), declared.end(), *value);
      SetIndex(key, k, found == declared.end() ? 0 : static_cast<std::size_t>(found - declared.begin()));
      break;
    }
    if (expect(',')) continue;
    if (!expect('}')) return std::nullopt;
    skip_spaces();
    return at == text.size() ? std::optional(key) : std::nullopt;
  }
}

std::size_t KnobSpace::IndexAt(const std::string& key, std::size_t knob) {
  return static_cast<unsigned char>(key[2 * knob]) | (static_cast<std::size_t>(static_cast<unsigned char>(key[2 * knob + 1])) << 8);
}

void KnobSpace::SetIndex(std::string& key, std::size_t knob, std::size_t index) {
  key[2 * knob] = static_cast<char>(index & 0xff);
  key[2 * knob + 1] = static_cast<char>((index >> 8) & 0xff);
}

KnobValues KnobSpace::FromKey(const std::string& key) const {
  KnobValues values;
  for (std::size_t k = 0; k < knobs_.size(); ++k) values[knobs_[k].name] = knobs_[k].values[IndexAt(key, k)];
  return values;
}

std::size_t KnobSpace::Ordinal(const std::string& key) const {
  std::size_t ordinal = 0;
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    ordinal = ordinal * std::max<std::size_t>(1, knobs_[k].values.size()) + IndexAt(key, k);
  }
  return ordinal;
}

void KnobSpace::AppendFeatures(const std::string& key, std::vector<float>& out) const {
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    const std::size_t index = IndexAt(key, k);
    out.push_back(static_cast<float>(index));
    if (numeric_[k].empty()) {
      out.push_back(static_cast<float>(index));
    } else {
      const double number = numeric_[k][index];
      out.push_back(static_cast<float>(std::copysign(std::log2(1.0 + std::fabs(number)), number)));
    }
  }
}

std::size_t KnobSpace::Distance(const std::string& a, const std::string& b) {
  std::size_t distance = 0;
  for (std::size_t k = 0; 2 * k + 1 < a.size() && 2 * k + 1 < b.size(); ++k) {
    distance += a[2 * k] != b[2 * k] || a[2 * k + 1] != b[2 * k + 1];
  }
  return distance;
}

std::string KnobSpace::Describe(const KnobValues& from, const KnobValues& to) const {
  std::string text;
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    const std::size_t a = IndexOf(k, from), b = IndexOf(k, to);
    if (a == b) continue;
    if (!text.empty()) text += ", ";
    text += knobs_[k].name + " " + knobs_[k].values[a] + "->" + knobs_[k].values[b];
  }
  return text;
}

}  // namespace kestrel
