#include "evaluators/command_answer.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "core/json_fields.h"
#include "core/text_lines.h"

namespace kestrel {
namespace {

using Json = nlohmann::json;

constexpr std::size_t kMaxSamples = 1'000'000;  // per shape and kernel
constexpr std::size_t kAnswerLogLimitBytes = 64 * 1024;  // as a run command's own output (subprocess.h)
constexpr std::size_t kReasonLimitBytes = 500;
// The shortest a call may take: below it a time is no measurement (a clock
// reads tens of ns; 1e-300 s samples were ranked at their ratio, "40x").
constexpr double kShortestCallSeconds = 1e-9;

// Collects the first violation; every check after it is a no-op.
class Checker {
 public:
  bool Bad(const std::string& field, const std::string& expected, const Json* got = nullptr) {
    if (error_.empty()) error_ = field + ": expected " + expected + (got ? ", got " + DescribeJson(*got) : "");
    return false;
  }
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  bool Keys(const Json& object, const std::string& where, const std::set<std::string>& allowed) {
    for (const auto& [key, value] : object.items()) {
      if (!allowed.count(key)) return Bad(where + key, "no such field (see docs/COMMAND_PROTOCOL.md)");
    }
    return true;
  }

  bool Samples(const Json& object, const std::string& where, const char* key, int min_samples,
               std::vector<double>& out) {
    const std::string field = where + key;
    if (!object.contains(key)) return Bad(field, "an array of seconds per call (missing)");
    const Json& samples = object[key];
    if (!samples.is_array() || samples.empty() || samples.size() > kMaxSamples) {
      return Bad(field, "a non-empty array of at most 1000000 seconds per call", &samples);
    }
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const Json& sample = samples[i];
      if (!sample.is_number() || !std::isfinite(sample.get<double>()) || !(sample.get<double>() >= kShortestCallSeconds)) {
        return Bad(field + "[" + std::to_string(i) + "]", "a finite number of seconds, at least 1e-9", &sample);
      }
      out.push_back(sample.get<double>());
    }
    if (samples.size() < static_cast<std::size_t>(std::max(1, min_samples))) {
      return Bad(field, "at least " + std::to_string(min_samples) + " samples ({min_samples}), got " +
                            std::to_string(samples.size()));
    }
    return true;
  }

  bool Error(const Json& object, const std::string& where, const char* key, double& out) {
    const std::string field = where + key;
    if (!object.contains(key)) return Bad(field, "a number >= 0 (missing)");
    const Json& value = object[key];
    if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0) {
      return Bad(field, "a finite number >= 0", &value);
    }
    out = value.get<double>();
    return true;
  }

  bool ShapeOf(const Json& object, const std::string& where, const Shape& want, Shape& out) {
    const std::string field = where + "shape";
    if (!object.contains("shape") || !object["shape"].is_object()) {
      return Bad(field, "an object of the dims, " + ToString(want), object.contains("shape") ? &object["shape"] : nullptr);
    }
    for (const auto& [dim, size] : object["shape"].items()) {
      if (!size.is_number_integer()) return Bad(field + "." + dim, "an integer", &size);
      out[dim] = size.get<std::int64_t>();
    }
    if (out != want) return Bad(field, "the task's timed shape " + ToString(want) + " (shapes in the task's order)", &object["shape"]);
    return true;
  }

 private:
  std::string error_;
};

}  // namespace

Result<CommandAnswer> ParseCommandAnswer(std::string_view text, const std::vector<Shape>& timed_shapes,
                                         std::string_view nonce, int min_samples) {
  auto parsed = ParseJsonDocument(text, "{answer}");
  if (!parsed) return Fail(parsed.error());
  const Json& root = *parsed;
  Checker check;
  CommandAnswer answer;
  if (!root.is_object()) {
    check.Bad("answer", "a JSON object", &root);
    return Fail(Error::InvalidArgument(check.error()));
  }
  check.Keys(root, "", {"protocol", "nonce", "outcome", "reason", "log", "shapes", "profile"});
  if (check.ok() && (!root.contains("protocol") || root["protocol"] != kCommandProtocolVersion)) {
    check.Bad("protocol", std::to_string(kCommandProtocolVersion), root.contains("protocol") ? &root["protocol"] : nullptr);
  }
  if (check.ok() && (!root.contains("nonce") || !root["nonce"].is_string() || root["nonce"] != nonce)) {
    check.Bad("nonce", "the {nonce} this evaluation passed", root.contains("nonce") ? &root["nonce"] : nullptr);
  }
  if (check.ok()) {
    const Json* outcome = root.contains("outcome") ? &root["outcome"] : nullptr;
    const auto parsed = outcome && outcome->is_string() ? ParseOutcome(outcome->get<std::string>()) : std::nullopt;
    if (!parsed) {
      check.Bad("outcome", "one of measured wrong crashed timed_out build_failed rejected", outcome);
    } else {
      answer.outcome = *parsed;
    }
  }
  for (const char* key : {"reason", "log"}) {
    if (!check.ok() || !root.contains(key)) continue;
    if (!root[key].is_string()) {
      check.Bad(key, "a string", &root[key]);
    } else {
      (key == std::string_view("reason") ? answer.reason : answer.log) = root[key].get<std::string>();
    }
  }
  // Bounded as the run command's own output is: a 50 MiB "log" was printed
  // and stored with every measurement of the node, and "reason" is one line.
  answer.log = HeadAndTail(std::move(answer.log), kAnswerLogLimitBytes);
  answer.reason = answer.reason.substr(0, answer.reason.find('\n'));
  if (answer.reason.size() > kReasonLimitBytes) answer.reason = answer.reason.substr(0, kReasonLimitBytes) + " [...]";
  if (check.ok() && answer.outcome != Outcome::kMeasured && answer.reason.empty()) {
    check.Bad("reason", "a non-empty line saying why the kernel was " + std::string(ToString(answer.outcome)));
  }
  if (check.ok() && answer.outcome == Outcome::kMeasured) {
    const Json* shapes = root.contains("shapes") ? &root["shapes"] : nullptr;
    if (!shapes || !shapes->is_array() || shapes->size() != timed_shapes.size()) {
      check.Bad("shapes", "an array of the " + std::to_string(timed_shapes.size()) + " timed shapes", shapes);
    }
    for (std::size_t s = 0; check.ok() && s < timed_shapes.size(); ++s) {
      const Json& item = (*shapes)[s];
      const std::string where = "shapes[" + std::to_string(s) + "].";
      if (!item.is_object()) {
        check.Bad("shapes[" + std::to_string(s) + "]", "an object", &item);
        break;
      }
      CommandShapeAnswer shape;
      check.Keys(item, where, {"shape", "candidate_s", "reference_s", "max_abs_error", "max_rel_error"}) &&
          check.ShapeOf(item, where, timed_shapes[s], shape.shape) &&
          check.Samples(item, where, "candidate_s", min_samples, shape.candidate_seconds) &&
          check.Samples(item, where, "reference_s", min_samples, shape.reference_seconds) &&
          check.Error(item, where, "max_abs_error", shape.max_abs_error) &&
          check.Error(item, where, "max_rel_error", shape.max_rel_error);
      answer.shapes.push_back(std::move(shape));
    }
  } else if (check.ok() && root.contains("shapes")) {
    check.Bad("shapes", "no shapes when the outcome is " + std::string(ToString(answer.outcome)));
  }
  if (check.ok() && root.contains("profile")) {
    if (answer.outcome != Outcome::kMeasured) {
      check.Bad("profile", "no profile when the outcome is " + std::string(ToString(answer.outcome)));
    } else if (auto profile = ProfileFromJson(root["profile"]); !profile) {
      // ProfileFromJson names the field: "profile.mix.total: wrong type".
      return Fail(Error::InvalidArgument(profile.error().message()));
    } else {
      answer.profile = std::move(*profile);
    }
  }
  if (!check.ok()) return Fail(Error::InvalidArgument(check.error()));
  return answer;
}

}  // namespace kestrel
