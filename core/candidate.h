#pragma once
// A candidate kernel: plain data. Its identity is the hash of everything that
// decides its behaviour (source, knob values, toolchain, flags), so the same
// kernel is never evaluated twice (CONTRACT.md, "Knobs").

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace kestrel {

// `// kestrel:knob NAME v1 v2 ...` in a source.
struct KnobSpec {
  std::string name;
  std::vector<std::string> values;  // in declaration order; the first is the default
};

// Knob name -> chosen value. Ordered, so that identity is stable.
using KnobValues = std::map<std::string, std::string>;

struct Candidate {
  std::string source;
  KnobValues knobs;
  std::string toolchain;           // e.g. "g++ (Debian 12.2.0-14) 12.2.0"
  std::vector<std::string> flags;  // compiler flags, knob defines excluded

  // Hex SHA-256 over source, knobs, toolchain and flags.
  std::string Identity() const;
  // -DNAME=value for each knob, in name order.
  std::vector<std::string> KnobDefines() const;
};

// Parses the knob declarations of a source. A malformed declaration (no
// values, a bad name, a name declared twice) is an InvalidArgument error.
// A declaration's values end at the line's end or at a "//" comment.
Result<std::vector<KnobSpec>> ParseKnobs(std::string_view source);

// The first value of each knob.
KnobValues DefaultKnobs(const std::vector<KnobSpec>& knobs);

// Checks that `values` names exactly the declared knobs, each with a declared value.
Status CheckKnobValues(const std::vector<KnobSpec>& knobs, const KnobValues& values);

// The source with `#define NAME value` lines for each knob put in front and
// its knob declarations turned into plain comments, so that it builds
// without -D flags and declares no knobs (kestrel export). Without values,
// the source unchanged.
std::string SubstituteKnobs(std::string_view source, const KnobValues& values);

// "BLOCK=4 UNROLL=2"
std::string ToString(const KnobValues& values);

}  // namespace kestrel
