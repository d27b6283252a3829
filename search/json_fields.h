#pragma once
// Reads the fields of one JSON object with type checks, recording the first
// error as "<origin>: <path>.<field>: expected <what>, got <json>". Unknown
// fields are errors too: a typo must not be silently ignored.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace kestrel {

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
