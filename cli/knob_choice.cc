#include "cli/knob_choice.h"

#include <cmath>

#include <fmt/format.h>

namespace kestrel::cli {

double KnobSpaceOf(const std::vector<KnobSpec>& knobs) {
  double space = 1;
  for (const KnobSpec& knob : knobs) space *= static_cast<double>(knob.values.size());
  return space;
}

std::string KnobSpaceSize(double configurations) {
  return configurations < 1e15 ? fmt::format("{:.0f}", configurations) : fmt::format("{:.3g}", configurations);
}

Result<std::vector<KnobValues>> ChooseKnobs(const std::string& source, const std::vector<std::string>& settings,
                                            bool sweep) {
  auto declared = ParseKnobs(source);
  if (!declared) return Fail(declared.error());
  KnobValues fixed;
  for (const auto& setting : settings) {
    const auto equals = setting.find('=');
    if (equals == std::string::npos) {
      return Fail(Error::InvalidArgument("--knob " + setting + ": expected NAME=VALUE"));
    }
    if (!fixed.emplace(setting.substr(0, equals), setting.substr(equals + 1)).second) {
      return Fail(Error::InvalidArgument("--knob " + setting + ": " + setting.substr(0, equals) +
                                         " is given twice"));
    }
  }
  KnobValues chosen = DefaultKnobs(*declared);
  for (const auto& [name, value] : fixed) chosen[name] = value;
  if (auto status = CheckKnobValues(*declared, chosen); !status) return Fail(status.error().WithContext("--knob"));
  std::vector<KnobValues> space = {chosen};
  if (!sweep) return space;
  double combinations = 1;
  for (const KnobSpec& knob : *declared) {
    if (!fixed.contains(knob.name)) combinations *= static_cast<double>(knob.values.size());
  }
  if (combinations > kMaxSweep) {
    return Fail(Error::InvalidArgument(
        "--sweep: " + KnobSpaceSize(combinations) + " combinations of the knobs not given with --knob, more than " +
        std::to_string(kMaxSweep) + " (one evaluation each); fix some with --knob NAME=VALUE"));
  }
  for (const KnobSpec& knob : *declared) {
    if (fixed.contains(knob.name)) continue;
    std::vector<KnobValues> wider;
    for (const KnobValues& partial : space) {
      for (const std::string& value : knob.values) {
        wider.push_back(partial);
        wider.back()[knob.name] = value;
      }
    }
    space = std::move(wider);
  }
  return space;
}

}  // namespace kestrel::cli
