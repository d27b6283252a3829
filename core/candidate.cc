#include "core/candidate.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "core/hash.h"

namespace kestrel {
namespace {

constexpr std::string_view kKnobTag = "kestrel:knob";

bool IsIdentifier(std::string_view name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

// Appends a length-prefixed field, so that no two different candidates
// serialize to the same bytes.
void AppendField(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
  out += ';';
}

}  // namespace

std::string Candidate::Identity() const {
  std::string canonical = "kestrel-candidate-v1;";
  AppendField(canonical, source);
  AppendField(canonical, std::to_string(knobs.size()));
  for (const auto& [name, value] : knobs) {
    AppendField(canonical, name);
    AppendField(canonical, value);
  }
  AppendField(canonical, toolchain);
  AppendField(canonical, std::to_string(flags.size()));
  for (const auto& flag : flags) AppendField(canonical, flag);
  return Sha256Hex(canonical);
}

std::vector<std::string> Candidate::KnobDefines() const {
  std::vector<std::string> defines;
  defines.reserve(knobs.size());
  for (const auto& [name, value] : knobs) defines.push_back("-D" + name + "=" + value);
  return defines;
}

namespace {

bool IsKnobValue(std::string_view value) {
  return !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '+' || c == '-';
  });
}

}  // namespace

Result<std::vector<KnobSpec>> ParseKnobs(std::string_view source) {
  std::vector<KnobSpec> knobs;
  std::set<std::string, std::less<>> seen;
  std::istringstream lines{std::string(source)};
  std::string line;
  int line_number = 0;
  while (std::getline(lines, line)) {
    ++line_number;
    const auto slashes = line.find("//");
    if (slashes == std::string::npos) continue;
    std::istringstream words(line.substr(slashes + 2));
    std::string tag;
    if (!(words >> tag) || tag != kKnobTag) continue;
    KnobSpec knob;
    const std::string where = "line " + std::to_string(line_number) + ": ";
    if (!(words >> knob.name)) return Fail(Error::InvalidArgument(where + "knob declaration without a name"));
    if (!IsIdentifier(knob.name)) {
      return Fail(Error::InvalidArgument(where + "knob name '" + knob.name + "' is not an identifier"));
    }
    if (!seen.insert(knob.name).second) {
      return Fail(Error::InvalidArgument(where + "knob '" + knob.name + "' is declared twice"));
    }
    std::set<std::string> values;
    // The values end at the line's end or at a comment after them
    // (`// kestrel:knob UNROLL 1 2 4  // elements per iteration`).
    for (std::string value; words >> value;) {
      if (value.starts_with("//")) break;
      // A value goes into -DNAME=VALUE, and a command evaluator's build
      // may paste it into a shell line ({knob_flags}): numbers and words
      // only ("1;touch${IFS}/tmp/x" ran on the host).
      if (!IsKnobValue(value)) {
        return Fail(Error::InvalidArgument(where + "knob '" + knob.name + "' value '" + value +
                                           "' is not a number or a word (letters, digits, _ . + - only)"));
      }
      if (!values.insert(value).second) {
        return Fail(Error::InvalidArgument(where + "knob '" + knob.name + "' lists value '" + value + "' twice"));
      }
      knob.values.push_back(value);
    }
    if (knob.values.empty()) {
      return Fail(Error::InvalidArgument(where + "knob '" + knob.name + "' has no values"));
    }
    knobs.push_back(std::move(knob));
  }
  return knobs;
}

KnobValues DefaultKnobs(const std::vector<KnobSpec>& knobs) {
  KnobValues values;
  for (const auto& knob : knobs) values[knob.name] = knob.values.front();
  return values;
}

Status CheckKnobValues(const std::vector<KnobSpec>& knobs, const KnobValues& values) {
  for (const auto& knob : knobs) {
    const auto it = values.find(knob.name);
    if (it == values.end()) return Fail(Error::InvalidArgument("knob '" + knob.name + "' has no value"));
    bool declared = false;
    for (const auto& value : knob.values) declared = declared || value == it->second;
    if (!declared) {
      return Fail(Error::InvalidArgument("knob '" + knob.name + "' has undeclared value '" + it->second + "'"));
    }
  }
  if (values.size() != knobs.size()) {
    for (const auto& [name, value] : values) {
      bool known = false;
      for (const auto& knob : knobs) known = known || knob.name == name;
      if (!known) return Fail(Error::InvalidArgument("'" + name + "' is not a knob of this source"));
    }
  }
  return {};
}

std::string SubstituteKnobs(std::string_view source, const KnobValues& values) {
  if (values.empty()) return std::string(source);
  std::string out;
  for (const auto& [name, value] : values) out += "#define " + name + " " + value + "\n";
  // Declarations become plain comments, so the file declares no knobs any more.
  std::size_t begin = 0;
  while (begin < source.size()) {
    std::size_t end = source.find('\n', begin);
    end = end == std::string_view::npos ? source.size() : end + 1;
    std::string line(source.substr(begin, end - begin));
    const auto tag = line.find(kKnobTag);
    const auto slashes = line.find("//");
    if (tag != std::string::npos && slashes != std::string::npos && slashes < tag &&
        line.find_first_not_of(" \t", slashes + 2) == tag) {
      line.replace(tag, kKnobTag.size(), "knob fixed by kestrel export:");
    }
    out += line;
    begin = end;
  }
  return out;
}

std::string ToString(const KnobValues& values) {
  std::string out;
  for (const auto& [name, value] : values) {
    if (!out.empty()) out += ' ';
    out += name + "=" + value;
  }
  return out;
}

}  // namespace kestrel
