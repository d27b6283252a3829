#include "cli/knob_choice.h"

namespace kestrel::cli {

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
    fixed[setting.substr(0, equals)] = setting.substr(equals + 1);
  }
  KnobValues chosen = DefaultKnobs(*declared);
  for (const auto& [name, value] : fixed) chosen[name] = value;
  if (auto status = CheckKnobValues(*declared, chosen); !status) return Fail(status.error().WithContext("--knob"));
  std::vector<KnobValues> space = {chosen};
  if (!sweep) return space;
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
