#pragma once
// Private to store/: the JSON text of the store's JSON columns. Encoders
// never fail (invalid UTF-8 is replaced, a non-finite double is written as
// null); decoders return a Corruption error naming `column` when the stored
// text is not what the schema says. No nlohmann exception leaves this file.

#include <string>
#include <string_view>
#include <vector>

#include "core/candidate.h"
#include "core/error.h"
#include "core/measurement.h"
#include "core/task.h"

namespace kestrel::store {

// {"NAME": "value", ...}
std::string EncodeKnobs(const KnobValues& knobs);
Result<KnobValues> DecodeKnobs(std::string_view text, std::string_view column);

// ["-O3", ...]
std::string EncodeStrings(const std::vector<std::string>& strings);
Result<std::vector<std::string>> DecodeStrings(std::string_view text, std::string_view column);

// {"rows": 2048, "cols": 1024}
std::string EncodeShape(const Shape& shape);
Result<Shape> DecodeShape(std::string_view text, std::string_view column);

// [1.25e-05, ...] seconds; null reads back as NaN.
std::string EncodeSamples(const std::vector<double>& samples);
Result<std::vector<double>> DecodeSamples(std::string_view text, std::string_view column);

// [{"shape_index": 0, "input_set": 1, "arg": "y", "index": 7, "expected": 1.0, "actual": 2.0}, ...]
std::string EncodeMismatches(const std::vector<Mismatch>& mismatches);
Result<std::vector<Mismatch>> DecodeMismatches(std::string_view text, std::string_view column);

// True when `text` is one JSON document.
bool IsJson(std::string_view text);

}  // namespace kestrel::store
