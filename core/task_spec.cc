#include "core/task_spec.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/expr.h"
#include "core/json_fields.h"

namespace kestrel {
namespace {

using Json = nlohmann::json;

constexpr std::array<std::string_view, 5> kRoleNames = {"input", "output", "inout", "dim", "scalar"};
constexpr std::array<ArgRole, 5> kRoles = {ArgRole::kInput, ArgRole::kOutput, ArgRole::kInOut, ArgRole::kDim,
                                           ArgRole::kScalar};

// Keywords that cannot name an entry or an argument in the generated C++.
constexpr std::string_view kCppKeywords[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
    "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
    "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
    "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
    "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
    "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
    "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
    "union", "unsigned"};

// The representable range of an integer type, as doubles (exact for i64's
// bounds up to rounding, which only matters at the very edge).
std::pair<double, double> IntegerRange(ScalarType type) {
  switch (type) {
    case ScalarType::kI8: return {-128.0, 127.0};
    case ScalarType::kU8: return {0.0, 255.0};
    case ScalarType::kI32: return {-2147483648.0, 2147483647.0};
    default: return {-9.2233720368547758e18, 9.2233720368547758e18};
  }
}

std::string Join(std::string_view parent, std::string_view key) {
  return parent.empty() ? std::string(key) : std::string(parent) + "." + std::string(key);
}

std::string Index(std::string_view parent, std::size_t i) {
  return std::string(parent) + "[" + std::to_string(i) + "]";
}

// How a value reads in a message: scalars as JSON, containers by kind.
std::string Describe(const Json& value) {
  if (value.is_object()) return "an object";
  if (value.is_array()) return "an array";
  return DescribeJson(value);
}

template <std::size_t N>
std::string OneOf(const std::array<std::string_view, N>& names) {
  std::string out = "one of";
  for (auto name : names) out += " " + std::string(name);
  return out;
}

bool IsPositiveInteger(const Json& value) {
  return value.is_number_integer() && (value.is_number_unsigned() ? value.get<std::uint64_t>() > 0
                                                                  : value.get<std::int64_t>() > 0);
}

bool IsDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// Validates one task.json. Each Parse* method returns false after recording
// the first error (the later ones would only repeat it in other words).
class SpecParser {
 public:
  explicit SpecParser(std::string file) : file_(std::move(file)) {}

  Result<Task> Parse(std::string_view text, const std::string& folder_name) {
    Task task;
    task.spec_text = std::string(text);
    auto root = ParseJsonDocument(text, file_);
    if (!root) return Fail(root.error());
    if (!ParseRoot(*root, folder_name, task)) return Fail(Error::InvalidArgument(*error_));
    return task;
  }

 private:
  bool ParseRoot(const Json& root, const std::string& folder_name, Task& task) {
    if (!root.is_object()) return Bad("", "expected a JSON object at the top level, got " + Describe(root));
    if (!CheckKeys(root, "", {"name", "description", "level", "language", "entry", "args", "shapes", "check_shapes",
                              "shape_ranges", "tolerance", "flops", "bytes", "reference", "seeds", "baseline",
                              "baseline_libs"})) {
      return false;
    }
    if (!GetString(root, "", "name", task.name)) return false;
    const bool name_ok = !task.name.empty() && std::all_of(task.name.begin(), task.name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
    });
    if (!name_ok) return Bad("name", "expected letters, digits, '_' or '-', got " + Describe(root["name"]));
    if (task.name != folder_name) {
      return Bad("name", "expected the task folder's name \"" + folder_name + "\", got " + Describe(root["name"]));
    }
    if (!GetString(root, "", "description", task.description)) return false;
    if (task.description.empty()) return Bad("description", "expected a non-empty string, got \"\"");
    if (root.contains("level")) {
      const Json& level = root["level"];
      if (!level.is_number_integer() || level.get<std::int64_t>() < 1 || level.get<std::int64_t>() > 3) {
        return Bad("level", "expected the suite level 1, 2 or 3, got " + Describe(level));
      }
      task.level = level.get<int>();
    }
    if (!GetString(root, "", "language", task.language)) return false;
    // cpp: the cpu evaluator; cuda: the cuda evaluator; c and python: the
    // command evaluator (a user's own harness, e.g. Triton, NKI or Pallas).
    if (task.language != "cpp" && task.language != "cuda" && task.language != "c" && task.language != "python") {
      return Bad("language", "expected one of cpp cuda c python, got " + Describe(root["language"]));
    }
    if (!GetString(root, "", "entry", task.entry)) return false;
    if (!IsCppIdentifier(task.entry)) {
      return Bad("entry", "expected a C identifier (not a keyword), got " + Describe(root["entry"]));
    }
    if (!ParseArgs(root, task)) return false;
    Shape dims;  // every dim, valued 1: the names an expression may use
    for (const auto& arg : task.args) {
      if (arg.role == ArgRole::kDim) dims[arg.name] = 1;
    }
    if (!ParseShapes(root, "shapes", /*required=*/true, dims, task.shapes)) return false;
    if (!ParseShapes(root, "check_shapes", /*required=*/false, dims, task.check_shapes)) return false;
    if (!ParseShapeRanges(root, dims, task.shape_ranges)) return false;
    if (!CheckBufferSizes(task)) return false;
    if (!ParseTolerance(root, task.tolerance)) return false;
    if (!ParseExpr(root, "flops", dims, task.flops)) return false;
    if (!ParseExpr(root, "bytes", dims, task.bytes)) return false;
    return ParseSources(root, task);
  }

  bool ParseArgs(const Json& root, Task& task) {
    if (!root.contains("args")) return Bad("args", "missing; expected a non-empty array of arguments");
    const Json& args = root["args"];
    if (!args.is_array() || args.empty()) return Bad("args", "expected a non-empty array, got " + Describe(args));
    std::set<std::string> names;
    bool writes = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string field = Index("args", i);
      ArgSpec arg;
      if (!ParseArg(args[i], field, arg)) return false;
      if (!names.insert(arg.name).second) {
        return Bad(Join(field, "name"), "expected a unique name, got \"" + arg.name + "\" a second time");
      }
      writes = writes || arg.role == ArgRole::kOutput || arg.role == ArgRole::kInOut;
      task.args.push_back(std::move(arg));
    }
    if (!writes) return Bad("args", "expected at least one argument with role output or inout, got none");
    // Shapes name dims, which may be declared after the buffers that use them.
    std::string dim_list;
    for (const auto& arg : task.args) {
      if (arg.role == ArgRole::kDim) dim_list += (dim_list.empty() ? "" : " ") + arg.name;
    }
    for (std::size_t i = 0; i < task.args.size(); ++i) {
      for (std::size_t d = 0; d < task.args[i].shape.size(); ++d) {
        const std::string& dim = task.args[i].shape[d];
        if (IsDigits(dim)) continue;
        const auto it = std::find_if(task.args.begin(), task.args.end(),
                                     [&](const ArgSpec& a) { return a.name == dim && a.role == ArgRole::kDim; });
        if (it == task.args.end()) {
          return Bad(Index(Join(Index("args", i), "shape"), d),
                     "expected the name of an arg with role dim (" + (dim_list.empty() ? "none" : dim_list) +
                         ") or a positive integer, got \"" + dim + "\"");
        }
      }
    }
    return true;
  }

  bool ParseArg(const Json& json, const std::string& field, ArgSpec& arg) {
    if (!json.is_object()) return Bad(field, "expected an object {name, role, ...}, got " + Describe(json));
    if (!CheckKeys(json, field, {"name", "role", "type", "shape", "init", "value"})) return false;
    if (!GetString(json, field, "name", arg.name)) return false;
    if (!IsCppIdentifier(arg.name)) {
      return Bad(Join(field, "name"), "expected a C identifier (not a keyword), got " + Describe(json["name"]));
    }
    if (!GetEnum(json, field, "role", kRoleNames, kRoles, arg.role)) return false;
    const auto refuse = [&](std::string_view key, std::string_view who) {
      return Bad(Join(field, key), "not allowed for role " + std::string(ToString(arg.role)) + " (only " +
                                       std::string(who) + ")");
    };
    if (arg.role == ArgRole::kDim) {
      if (json.contains("type") && json["type"] != "i64") {
        return Bad(Join(field, "type"), "expected \"i64\" or no type (a dim is always int64_t), got " +
                                            Describe(json["type"]));
      }
      arg.type = ScalarType::kI64;
    } else if (!GetEnum(json, field, "type", kScalarTypeNames, kScalarTypes, arg.type)) {
      return false;
    }
    if (arg.IsBuffer()) {
      if (!ParseArgShape(json, field, arg)) return false;
    } else if (json.contains("shape")) {
      return refuse("shape", "input, output and inout have a shape");
    }
    if (json.contains("init")) {
      if (arg.role != ArgRole::kInput && arg.role != ArgRole::kInOut) return refuse("init", "input and inout");
      if (!ParseInit(json["init"], Join(field, "init"), arg)) return false;
    }
    if (arg.role == ArgRole::kScalar) {
      if (arg.type == ScalarType::kF16 || arg.type == ScalarType::kBF16) {
        return Bad(Join(field, "type"), "a scalar of " + std::string(ToString(arg.type)) +
                                            " is not supported (16-bit floats are for buffers); pass an f32");
      }
      if (!GetNumber(json, field, "value", arg.value)) return false;
      if (arg.type == ScalarType::kF32 && std::fabs(arg.value) > std::numeric_limits<float>::max()) {
        // It was passed as inf, without a word.
        return Bad(Join(field, "value"), "expected a number an f32 holds (at most about 3.4e38), got " +
                                             Describe(json["value"]));
      }
      if (!IsFloating(arg.type)) {
        const auto [lo, hi] = IntegerRange(arg.type);
        if (arg.value != std::floor(arg.value) || arg.value < lo || arg.value > hi) {
          return Bad(Join(field, "value"), "expected an integer that fits " + std::string(ToString(arg.type)) +
                                               ", got " + Describe(json["value"]));
        }
      }
    } else if (json.contains("value")) {
      return refuse("value", "scalar");
    }
    return true;
  }

  bool ParseArgShape(const Json& json, const std::string& field, ArgSpec& arg) {
    const std::string shape_field = Join(field, "shape");
    if (!json.contains("shape")) return Bad(shape_field, "missing; expected a non-empty array of dim names");
    const Json& shape = json["shape"];
    if (!shape.is_array() || shape.empty()) {
      return Bad(shape_field, "expected a non-empty array of dim names, got " + Describe(shape));
    }
    for (std::size_t d = 0; d < shape.size(); ++d) {
      const Json& dim = shape[d];
      if (dim.is_string() && !dim.get<std::string>().empty()) {
        const std::string text = dim.get<std::string>();
        if (IsDigits(text) && std::all_of(text.begin(), text.end(), [](char c) { return c == '0'; })) {
          return Bad(Index(shape_field, d), "expected a dim name or a positive integer, got " + Describe(dim));
        }
        arg.shape.push_back(text);
      } else if (IsPositiveInteger(dim)) {
        arg.shape.push_back(std::to_string(dim.get<std::int64_t>()));
      } else {
        return Bad(Index(shape_field, d), "expected a dim name or a positive integer, got " + Describe(dim));
      }
    }
    return true;
  }

  bool ParseInit(const Json& json, const std::string& field, ArgSpec& arg) {
    if (!json.is_object()) return Bad(field, "expected an object {dist, ...}, got " + Describe(json));
    static constexpr std::array<std::string_view, 3> kDistNames = {"normal", "uniform", "int"};
    static constexpr std::array<InitSpec::Dist, 3> kDists = {InitSpec::Dist::kNormal, InitSpec::Dist::kUniform,
                                                             InitSpec::Dist::kInt};
    InitSpec& init = arg.init;
    if (!GetEnum(json, field, "dist", kDistNames, kDists, init.dist)) return false;
    if (init.dist == InitSpec::Dist::kNormal) {
      if (!CheckKeys(json, field, {"dist", "mean", "std"})) return false;
      if (json.contains("mean") && !GetNumber(json, field, "mean", init.mean)) return false;
      if (json.contains("std") && !GetNumber(json, field, "std", init.std)) return false;
      if (!(init.std > 0.0)) return Bad(Join(field, "std"), "expected a positive number, got " + Describe(json["std"]));
      return true;
    }
    if (!CheckKeys(json, field, {"dist", "lo", "hi"})) return false;
    if (!GetNumber(json, field, "lo", init.lo) || !GetNumber(json, field, "hi", init.hi)) return false;
    if (init.lo > init.hi) {
      return Bad(Join(field, "hi"), "expected hi >= lo (" + Describe(json["lo"]) + "), got " + Describe(json["hi"]));
    }
    if (init.dist == InitSpec::Dist::kInt) {
      for (const char* key : {"lo", "hi"}) {
        const double value = key[0] == 'l' ? init.lo : init.hi;
        if (value != std::floor(value)) {
          return Bad(Join(field, key), "expected an integer for dist int, got " + Describe(json[key]));
        }
      }
    }
    if (!IsFloating(arg.type)) {
      const auto [lo, hi] = IntegerRange(arg.type);
      if (init.lo < lo || init.hi > hi) {
        return Bad(field, "expected lo and hi within the range of " + std::string(ToString(arg.type)) + ", got [" +
                              Describe(json["lo"]) + ", " + Describe(json["hi"]) + "]");
      }
    }
    return true;
  }

  bool ParseShapes(const Json& root, const char* key, bool required, const Shape& dims, std::vector<Shape>& out) {
    if (!root.contains(key)) return !required || Bad(key, "missing; expected a non-empty array of {dim: size}");
    const Json& shapes = root[key];
    if (!shapes.is_array() || (required && shapes.empty())) {
      return Bad(key, std::string("expected ") + (required ? "a non-empty" : "an") + " array of {dim: size}, got " +
                          Describe(shapes));
    }
    std::string dim_list;
    for (const auto& [dim, unused] : dims) dim_list += (dim_list.empty() ? "" : " ") + dim;
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const std::string field = Index(key, i);
      const Json& json = shapes[i];
      if (!json.is_object()) return Bad(field, "expected an object {dim: size}, got " + Describe(json));
      Shape shape;
      for (const auto& [dim, value] : json.items()) {
        if (!dims.contains(dim)) {
          return Bad(Join(field, dim), "unknown dim (the task's dims: " + (dim_list.empty() ? "none" : dim_list) + ")");
        }
        if (!IsPositiveInteger(value) || (value.is_number_unsigned() && value.get<std::uint64_t>() >
                                          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))) {
          return Bad(Join(field, dim), "expected a positive integer, got " + Describe(value));
        }
        shape[dim] = value.get<std::int64_t>();
      }
      for (const auto& [dim, unused] : dims) {
        if (!shape.contains(dim)) return Bad(Join(field, dim), "missing; expected a positive integer");
      }
      out.push_back(std::move(shape));
    }
    return true;
  }

  // Every buffer of every shape within kMaxBufferBytes: a size past it cannot be
  // allocated, and one past 2^63 bytes wrapped around and crashed the
  // reference instead of being refused here.
  bool CheckBufferSizes(const Task& task) {
    constexpr double kMaxBufferBytes = 1ULL << 40;  // 1 TiB
    const auto check = [&](const Shape& shape, const std::string& field) {
      for (const ArgSpec& arg : task.args) {
        if (!arg.IsBuffer()) continue;
        double bytes = static_cast<double>(SizeOf(arg.type));
        for (const std::string& dim : arg.shape) {
          const auto it = shape.find(dim);
          bytes *= it != shape.end() ? static_cast<double>(it->second) : std::strtod(dim.c_str(), nullptr);
        }
        if (bytes > kMaxBufferBytes) {
          return Bad(field, "buffer " + arg.name + " would take " + FormatBytes(bytes) +
                                ", more than the 1 TiB a buffer may take");
        }
      }
      return true;
    };
    for (std::size_t i = 0; i < task.shapes.size(); ++i) {
      if (!check(task.shapes[i], Index("shapes", i))) return false;
    }
    for (std::size_t i = 0; i < task.check_shapes.size(); ++i) {
      if (!check(task.check_shapes[i], Index("check_shapes", i))) return false;
    }
    return true;  // a hidden shape is no larger than the largest timed one (core/hidden_shapes.h)
  }

  static std::string FormatBytes(double bytes) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.3g bytes", bytes);
    return text;
  }

  // "shape_ranges": {"rows": [1, 4096], ...}: positive integers, lo <= hi.
  bool ParseShapeRanges(const Json& root, const Shape& dims,
                        std::map<std::string, std::pair<std::int64_t, std::int64_t>>& out) {
    if (!root.contains("shape_ranges")) return true;
    const Json& json = root["shape_ranges"];
    if (!json.is_object()) return Bad("shape_ranges", "expected an object {dim: [lo, hi]}, got " + Describe(json));
    std::string dim_list;
    for (const auto& [dim, unused] : dims) dim_list += (dim_list.empty() ? "" : " ") + dim;
    for (const auto& [dim, range] : json.items()) {
      const std::string field = Join("shape_ranges", dim);
      if (!dims.contains(dim)) {
        return Bad(field, "unknown dim (the task's dims: " + (dim_list.empty() ? "none" : dim_list) + ")");
      }
      const auto in_range = [](const Json& value) {
        return IsPositiveInteger(value) && !(value.is_number_unsigned() &&
                                             value.get<std::uint64_t>() >
                                                 static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
      };
      if (!range.is_array() || range.size() != 2 || !in_range(range[0]) || !in_range(range[1]) ||
          range[0].get<std::int64_t>() > range[1].get<std::int64_t>()) {
        return Bad(field, "expected [lo, hi], two positive integers with lo <= hi, got " + range.dump());
      }
      out[dim] = {range[0].get<std::int64_t>(), range[1].get<std::int64_t>()};
    }
    return true;
  }

  bool ParseTolerance(const Json& root, Tolerance& tolerance) {
    if (!root.contains("tolerance")) return Bad("tolerance", "missing; expected {\"rtol\": R, \"atol\": A}");
    const Json& json = root["tolerance"];
    if (!json.is_object()) return Bad("tolerance", "expected an object {rtol, atol}, got " + Describe(json));
    if (!CheckKeys(json, "tolerance", {"rtol", "atol"})) return false;
    for (const char* key : {"rtol", "atol"}) {
      double& value = key[0] == 'r' ? tolerance.rtol : tolerance.atol;
      if (!GetNumber(json, "tolerance", key, value)) return false;
      if (value < 0.0) {
        return Bad(Join("tolerance", key), "expected a non-negative number, got " + Describe(json[key]));
      }
    }
    return true;
  }

  bool ParseExpr(const Json& root, const char* key, const Shape& dims, std::string& out) {
    if (!root.contains(key)) return true;
    if (!GetString(root, "", key, out)) return false;
    if (auto checked = CheckExpr(out, dims); !checked) {
      return Bad(key, "expected an arithmetic expression over the dims: " + checked.error().message());
    }
    return true;
  }

  bool ParseSources(const Json& root, Task& task) {
    if (!GetPath(root, "reference", task.reference.name)) return false;
    if (!root.contains("seeds")) return Bad("seeds", "missing; expected a non-empty array of file names");
    const Json& seeds = root["seeds"];
    if (!seeds.is_array() || seeds.empty()) {
      return Bad("seeds", "expected a non-empty array of file names, got " + Describe(seeds));
    }
    std::set<std::string> seen;
    for (std::size_t i = 0; i < seeds.size(); ++i) {
      SourceFile seed;
      if (!CheckPath(seeds[i], Index("seeds", i), seed.name)) return false;
      if (!seen.insert(seed.name).second) {
        return Bad(Index("seeds", i), "expected each seed once, got " + Describe(seeds[i]) + " again");
      }
      task.seeds.push_back(std::move(seed));
    }
    if (root.contains("baseline")) {
      task.baseline.emplace();
      if (!GetPath(root, "baseline", task.baseline->name)) return false;
    }
    if (root.contains("baseline_libs")) {
      if (!task.baseline) return Bad("baseline_libs", "given without a baseline; expected it beside \"baseline\"");
      const Json& libs = root["baseline_libs"];
      const auto bad = [&] {
        return Bad("baseline_libs", "expected an array of library names (e.g. [\"openblas\"] for -lopenblas), got " +
                                        Describe(libs));
      };
      if (!libs.is_array()) return bad();
      for (const Json& lib : libs) {
        if (!lib.is_string()) return bad();
        const std::string name = lib.get<std::string>();
        const bool ok = !name.empty() && std::isalnum(static_cast<unsigned char>(name.front())) && std::all_of(name.begin(), name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '+';
        });
        if (!ok) return bad();
        task.baseline_libs.push_back(name);
      }
    }
    return true;
  }

  bool GetPath(const Json& root, const char* key, std::string& out) {
    if (!root.contains(key)) return Bad(key, "missing; expected a file name inside the task folder");
    return CheckPath(root[key], key, out);
  }

  // A relative path that stays inside the task folder.
  bool CheckPath(const Json& json, const std::string& field, std::string& out) {
    const auto bad = [&] {
      return Bad(field, "expected a file name inside the task folder, got " + Describe(json));
    };
    if (!json.is_string() || json.get<std::string>().empty()) return bad();
    out = json.get<std::string>();
    const std::filesystem::path path(out);
    if (path.is_absolute() || path.has_root_name() || path.has_root_directory()) return bad();
    for (const auto& part : path) {
      if (part == "..") return bad();
    }
    return true;
  }

  bool CheckKeys(const Json& object, const std::string& field, std::initializer_list<std::string_view> allowed) {
    for (const auto& [key, unused] : object.items()) {
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      std::string list;
      for (auto name : allowed) list += (list.empty() ? "" : " ") + std::string(name);
      return Bad(Join(field, key), "unknown field (expected one of " + list + ")");
    }
    return true;
  }

  bool GetString(const Json& object, const std::string& parent, const char* key, std::string& out) {
    const std::string field = Join(parent, key);
    if (!object.contains(key)) return Bad(field, "missing; expected a string");
    const Json& value = object[key];
    if (!value.is_string()) return Bad(field, "expected a string, got " + Describe(value));
    out = value.get<std::string>();
    return true;
  }

  bool GetNumber(const Json& object, const std::string& parent, const char* key, double& out) {
    const std::string field = Join(parent, key);
    if (!object.contains(key)) return Bad(field, "missing; expected a number");
    const Json& value = object[key];
    if (!value.is_number()) return Bad(field, "expected a number, got " + Describe(value));
    out = value.get<double>();
    return true;
  }

  template <class T, std::size_t N>
  bool GetEnum(const Json& object, const std::string& parent, const char* key,
               const std::array<std::string_view, N>& names, const std::array<T, N>& values, T& out) {
    const std::string field = Join(parent, key);
    if (!object.contains(key)) return Bad(field, "missing; expected " + OneOf(names));
    const Json& value = object[key];
    if (value.is_string()) {
      for (std::size_t i = 0; i < N; ++i) {
        if (value.get<std::string>() == names[i]) {
          out = values[i];
          return true;
        }
      }
    }
    return Bad(field, "expected " + OneOf(names) + ", got " + Describe(value));
  }

  // Records "FILE: FIELD: MESSAGE" (or "FILE: MESSAGE" at the top level).
  bool Bad(const std::string& field, const std::string& message) {
    if (!error_) error_ = file_ + ": " + (field.empty() ? "" : field + ": ") + message;
    return false;
  }

  std::string file_;
  std::optional<std::string> error_;
};

}  // namespace

bool IsCppIdentifier(std::string_view name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return std::find(std::begin(kCppKeywords), std::end(kCppKeywords), name) == std::end(kCppKeywords);
}

Result<Task> ParseTaskSpec(std::string_view text, const std::string& file, const std::string& folder_name) {
  return SpecParser(file).Parse(text, folder_name);
}

}  // namespace kestrel
