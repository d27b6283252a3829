#include "core/json_fields.h"

#include <cmath>
#include <vector>

namespace kestrel {

using Json = nlohmann::json;

Result<Json> ParseJsonDocument(std::string_view text, const std::string& origin) {
  // The containers open at the current point of the parse, outermost first,
  // so that a repeated key is named by its path ("shapes[1].rows").
  struct Container {
    std::string path;
    bool is_array = false;
    std::size_t items = 0;       // an array's items so far
    std::set<std::string> keys;  // an object's keys so far
    std::string key;             // an object's current key
  };
  std::vector<Container> open;
  std::optional<std::string> duplicate;
  const auto child_path = [&open]() -> std::string {
    if (open.empty()) return "";
    Container& parent = open.back();
    if (parent.is_array) return parent.path + "[" + std::to_string(parent.items++) + "]";
    return parent.path.empty() ? parent.key : parent.path + "." + parent.key;
  };
  // Every document Kestrel reads nests a few levels; one nested 100000
  // deep (200 KB) cost gigabytes in the paths above before it was refused.
  constexpr std::size_t kMaxDepth = 64;
  struct TooDeep {};
  const Json::parser_callback_t on_event = [&](int, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start: {
        if (open.size() >= kMaxDepth) throw TooDeep{};
        std::string path = child_path();
        open.push_back({std::move(path), event == Json::parse_event_t::array_start, 0, {}, {}});
        break;
      }
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        if (!open.empty()) open.pop_back();
        break;
      case Json::parse_event_t::key:
        if (!open.empty()) {
          open.back().key = parsed.get<std::string>();
          if (!open.back().keys.insert(open.back().key).second && !duplicate) duplicate = child_path();
        }
        break;
      case Json::parse_event_t::value:
        if (!open.empty() && open.back().is_array) ++open.back().items;
        break;
    }
    return true;
  };
  Json document;
  try {
    document = Json::parse(text, on_event);
  } catch (const Json::exception& e) {
    return Fail(Error::InvalidArgument(origin + ": not valid JSON: " + e.what()));
  } catch (const TooDeep&) {
    return Fail(Error::InvalidArgument(origin + ": nested more than " + std::to_string(kMaxDepth) +
                                       " arrays and objects deep (at " + open.back().path + ")"));
  }
  if (duplicate) {
    return Fail(Error::InvalidArgument(origin + ": " + *duplicate + ": the field appears twice in one object"));
  }
  return document;
}

std::string DescribeJson(const Json& value) {
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

JsonFields::JsonFields(const nlohmann::json& object, std::string origin, std::string path)
    : object_(object), origin_(std::move(origin)), path_(std::move(path)) {
  if (!object_.is_object()) {
    error_ = Error::InvalidArgument(origin_ + ": " + (path_.empty() ? std::string("the document") : path_) +
                                    ": expected an object, got " + DescribeJson(object_));
  }
}

std::string JsonFields::PathOf(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

void JsonFields::Fail(const std::string& key, const std::string& expected) {
  if (error_) return;
  std::string message = origin_ + ": " + PathOf(key) + ": expected " + expected;
  if (object_.is_object() && object_.contains(key)) message += ", got " + DescribeJson(object_.at(key));
  error_ = Error::InvalidArgument(message);
}

bool JsonFields::Has(const char* key) const { return object_.is_object() && object_.contains(key); }

const nlohmann::json* JsonFields::Field(const char* key) {
  seen_.insert(key);
  if (!object_.is_object()) return nullptr;
  const auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

void JsonFields::String(const char* key, std::string& out) {
  const auto* value = Field(key);
  if (!value) return;
  if (!value->is_string()) return Fail(key, "a string");
  out = value->get<std::string>();
}

void JsonFields::Number(const char* key, double& out, double min, double max) {
  const auto* value = Field(key);
  if (!value) return;
  if (!value->is_number()) return Fail(key, "a number");
  const double number = value->get<double>();
  if (!std::isfinite(number) || number < min || number > max) {
    return Fail(key, "a number in [" + nlohmann::json(min).dump() + ", " + nlohmann::json(max).dump() + "]");
  }
  out = number;
}

void JsonFields::Integer(const char* key, std::int64_t& out, std::int64_t min, std::int64_t max) {
  const auto* value = Field(key);
  if (!value) return;
  if (!value->is_number_integer()) return Fail(key, "an integer");
  const auto number = value->get<std::int64_t>();
  if (number < min || number > max) {
    return Fail(key, "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  out = number;
}

void JsonFields::Integer(const char* key, int& out, int min, int max) {
  std::int64_t wide = out;
  Integer(key, wide, min, max);
  out = static_cast<int>(wide);
}

void JsonFields::Boolean(const char* key, bool& out) {
  const auto* value = Field(key);
  if (!value) return;
  if (!value->is_boolean()) return Fail(key, "true or false");
  out = value->get<bool>();
}

void JsonFields::StringList(const char* key, std::vector<std::string>& out) {
  const auto* value = Field(key);
  if (!value) return;
  if (!value->is_array()) return Fail(key, "an array of strings");
  std::vector<std::string> list;
  for (const auto& item : *value) {
    if (!item.is_string()) return Fail(key, "an array of strings");
    list.push_back(item.get<std::string>());
  }
  out = std::move(list);
}

void JsonFields::OneOf(const char* key, std::string& out, const std::vector<std::string>& allowed) {
  std::string value = out;
  String(key, value);
  bool ok = false;
  for (const auto& candidate : allowed) ok = ok || candidate == value;
  if (!ok) {
    std::string expected = "one of";
    for (const auto& candidate : allowed) expected += " " + candidate;
    return Fail(key, expected);
  }
  out = value;
}

const nlohmann::json* JsonFields::Object(const char* key) {
  const auto* value = Field(key);
  if (!value) return nullptr;
  if (!value->is_object()) {
    Fail(key, "an object");
    return nullptr;
  }
  return value;
}

Status JsonFields::Finish() {
  if (!error_ && object_.is_object()) {
    for (const auto& [key, value] : object_.items()) {
      if (seen_.count(key)) continue;
      std::string known;
      for (const auto& name : seen_) known += (known.empty() ? "" : ", ") + name;
      error_ = Error::InvalidArgument(origin_ + ": " + PathOf(key) + ": unknown field (expected one of " + known + ")");
      break;
    }
  }
  if (error_) return kestrel::Fail(*error_);
  return {};
}

}  // namespace kestrel
