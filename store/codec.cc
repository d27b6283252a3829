#include "store/codec.h"

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/json_text.h"

namespace kestrel::store {
namespace {

using nlohmann::json;

std::string Dump(const json& value) { return JsonText(value); }

Error BadColumn(std::string_view column, std::string_view why) {
  return Error::Corruption("DB: bad JSON in " + std::string(column) + ": " + std::string(why));
}

// Parses `text` and hands it to `decode`, turning any nlohmann exception
// (a parse error, a wrong type) into a Corruption error naming `column`.
template <class T, class DecodeFn>
Result<T> Decode(std::string_view text, std::string_view column, DecodeFn decode) {
  try {
    return decode(json::parse(text));
  } catch (const json::exception& error) {
    return Fail(BadColumn(column, error.what()));
  }
}

double ToDouble(const json& value) {
  return value.is_null() ? std::numeric_limits<double>::quiet_NaN() : value.get<double>();
}

json FromDouble(double value) { return std::isfinite(value) ? json(value) : json(nullptr); }

}  // namespace

std::string EncodeKnobs(const KnobValues& knobs) {
  json object = json::object();
  for (const auto& [name, value] : knobs) object[name] = value;
  return Dump(object);
}

Result<KnobValues> DecodeKnobs(std::string_view text, std::string_view column) {
  return Decode<KnobValues>(text, column, [&](const json& value) -> Result<KnobValues> {
    if (!value.is_object()) return Fail(BadColumn(column, "expected an object"));
    KnobValues knobs;
    for (const auto& [name, knob] : value.items()) knobs[name] = knob.get<std::string>();
    return knobs;
  });
}

std::string EncodeStrings(const std::vector<std::string>& strings) { return Dump(json(strings)); }

Result<std::vector<std::string>> DecodeStrings(std::string_view text, std::string_view column) {
  return Decode<std::vector<std::string>>(text, column, [&](const json& value) -> Result<std::vector<std::string>> {
    if (!value.is_array()) return Fail(BadColumn(column, "expected an array"));
    return value.get<std::vector<std::string>>();
  });
}

std::string EncodeShape(const Shape& shape) {
  json object = json::object();
  for (const auto& [dim, size] : shape) object[dim] = size;
  return Dump(object);
}

Result<Shape> DecodeShape(std::string_view text, std::string_view column) {
  return Decode<Shape>(text, column, [&](const json& value) -> Result<Shape> {
    if (!value.is_object()) return Fail(BadColumn(column, "expected an object"));
    Shape shape;
    for (const auto& [dim, size] : value.items()) shape[dim] = size.get<std::int64_t>();
    return shape;
  });
}

std::string EncodeSamples(const std::vector<double>& samples) {
  json array = json::array();
  for (double sample : samples) array.push_back(FromDouble(sample));
  return Dump(array);
}

Result<std::vector<double>> DecodeSamples(std::string_view text, std::string_view column) {
  return Decode<std::vector<double>>(text, column, [&](const json& value) -> Result<std::vector<double>> {
    if (!value.is_array()) return Fail(BadColumn(column, "expected an array"));
    std::vector<double> samples;
    samples.reserve(value.size());
    for (const auto& sample : value) samples.push_back(ToDouble(sample));
    return samples;
  });
}

std::string EncodeMismatches(const std::vector<Mismatch>& mismatches) {
  json array = json::array();
  for (const auto& mismatch : mismatches) {
    array.push_back({{"shape_index", mismatch.shape_index},
                     {"input_set", mismatch.input_set},
                     {"arg", mismatch.arg},
                     {"index", mismatch.index},
                     {"expected", FromDouble(mismatch.expected)},
                     {"actual", FromDouble(mismatch.actual)}});
  }
  return Dump(array);
}

Result<std::vector<Mismatch>> DecodeMismatches(std::string_view text, std::string_view column) {
  return Decode<std::vector<Mismatch>>(text, column, [&](const json& value) -> Result<std::vector<Mismatch>> {
    if (!value.is_array()) return Fail(BadColumn(column, "expected an array"));
    std::vector<Mismatch> mismatches;
    for (const auto& item : value) {
      Mismatch mismatch;
      mismatch.shape_index = item.at("shape_index").get<int>();
      mismatch.input_set = item.at("input_set").get<int>();
      mismatch.arg = item.at("arg").get<std::string>();
      mismatch.index = item.at("index").get<std::int64_t>();
      mismatch.expected = ToDouble(item.at("expected"));
      mismatch.actual = ToDouble(item.at("actual"));
      mismatches.push_back(std::move(mismatch));
    }
    return mismatches;
  });
}

bool IsJson(std::string_view text) { return json::accept(text); }

}  // namespace kestrel::store
