#pragma once
// The one way a user's JSON document is read (task.json, a run config, a
// command evaluator's answer): ParseJsonDocument, then a JsonFields per
// object, which reads its fields with type checks and records the first
// error as "<origin>: <path>.<field>: expected <what>, got <json>". Unknown
// and repeated fields are errors too: a typo or a stale copy of a field
// must not be silently ignored.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace kestrel {

// Parses `text`, the content of `origin` (named in messages only). A key
// that appears twice in one object is refused (nlohmann would keep the last
// one): InvalidArgument "ORIGIN: PATH: the field appears twice in one
// object", PATH like "tolerance.rtol"; text that is not JSON is refused as
// "ORIGIN: not valid JSON: ..."; so is one nested over 64 levels deep.
Result<nlohmann::json> ParseJsonDocument(std::string_view text, const std::string& origin);

// How a value reads in a message: its JSON text, cut after 60 characters.
std::string DescribeJson(const nlohmann::json& value);

class JsonFields {
 public:
  // `object` must outlive this reader. `path` is the object's own path ("" at top level).
  JsonFields(const nlohmann::json& object, std::string origin, std::string path);

  bool Has(const char* key) const;
  void String(const char* key, std::string& out);
  void Number(const char* key, double& out, double min, double max);
  void Integer(const char* key, std::int64_t& out, std::int64_t min, std::int64_t max);
  void Integer(const char* key, int& out, int min, int max);
  void StringList(const char* key, std::vector<std::string>& out);
  void Boolean(const char* key, bool& out);
  void OneOf(const char* key, std::string& out, const std::vector<std::string>& allowed);
  // The child object at `key`, or nullptr (an error is recorded when it is not an object).
  const nlohmann::json* Object(const char* key);
  // Marks a field the caller reads itself (an array of objects) as known.
  void MarkSeen(const char* key) { seen_.insert(key); }
  // Child path for nested readers: "budget" or "mutators[1]".
  std::string PathOf(const std::string& key) const;
  const std::string& origin() const { return origin_; }

  // Records an error at `key` unless one is recorded already.
  void Fail(const std::string& key, const std::string& expected);
  // Checks for unknown fields, then returns the first error, if any.
  Status Finish();

 private:
  const nlohmann::json* Field(const char* key);
  const nlohmann::json& object_;
  std::string origin_;
  std::string path_;
  std::set<std::string> seen_;
  std::optional<Error> error_;
};

}  // namespace kestrel
