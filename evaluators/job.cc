#include "evaluators/job.h"

#include <array>
#include <cmath>
#include <limits>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

namespace kestrel {
namespace {

using nlohmann::json;

constexpr std::array<std::pair<ArgRole, std::string_view>, 5> kRoleNames{{
    {ArgRole::kInput, "input"},
    {ArgRole::kOutput, "output"},
    {ArgRole::kInOut, "inout"},
    {ArgRole::kDim, "dim"},
    {ArgRole::kScalar, "scalar"},
}};

constexpr std::array<std::pair<InitSpec::Dist, std::string_view>, 3> kDistNames{{
    {InitSpec::Dist::kNormal, "normal"},
    {InitSpec::Dist::kUniform, "uniform"},
    {InitSpec::Dist::kInt, "int"},
}};

template <class Enum, std::size_t N>
std::string_view NameOf(const std::array<std::pair<Enum, std::string_view>, N>& names, Enum value) {
  for (const auto& [key, name] : names) {
    if (key == value) return name;
  }
  return "?";
}

// Throws json::exception-like std::runtime_error on an unknown name; the
// callers turn every exception into an InvalidArgument error.
template <class Enum, std::size_t N>
Enum ValueOf(const std::array<std::pair<Enum, std::string_view>, N>& names, const std::string& name,
             const char* what) {
  for (const auto& [key, text] : names) {
    if (text == name) return key;
  }
  throw std::runtime_error(std::string("unknown ") + what + " '" + name + "'");
}

json ArgToJson(const JobArg& arg) {
  json out = {{"name", arg.name},
              {"role", NameOf(kRoleNames, arg.role)},
              {"type", ToString(arg.type)},
              {"count", arg.count},
              {"value", arg.value}};
  out["init"] = {{"dist", NameOf(kDistNames, arg.init.dist)}, {"mean", arg.init.mean},
                 {"std", arg.init.std},                        {"lo", arg.init.lo},
                 {"hi", arg.init.hi}};
  return out;
}

JobArg ArgFromJson(const json& in) {
  JobArg arg;
  arg.name = in.at("name").get<std::string>();
  arg.role = ValueOf(kRoleNames, in.at("role").get<std::string>(), "role");
  const std::string type = in.at("type").get<std::string>();
  const auto parsed_type = ParseScalarType(type);
  if (!parsed_type) throw std::runtime_error("unknown type '" + type + "'");
  arg.type = *parsed_type;
  arg.count = in.at("count").get<std::int64_t>();
  arg.value = in.at("value").get<double>();
  const json& init = in.at("init");
  arg.init.dist = ValueOf(kDistNames, init.at("dist").get<std::string>(), "dist");
  arg.init.mean = init.at("mean").get<double>();
  arg.init.std = init.at("std").get<double>();
  arg.init.lo = init.at("lo").get<double>();
  arg.init.hi = init.at("hi").get<double>();
  if (arg.count < 0) throw std::runtime_error("negative count for " + arg.name);
  return arg;
}

// A double that may be NaN or infinite (a poisoned output), which JSON
// numbers cannot hold: such values travel as strings.
json DoubleToJson(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

double DoubleFromJson(const json& in) {
  if (in.is_number()) return in.get<double>();
  const std::string text = in.get<std::string>();
  if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (text == "inf") return std::numeric_limits<double>::infinity();
  if (text == "-inf") return -std::numeric_limits<double>::infinity();
  throw std::runtime_error("bad number '" + text + "'");
}

json ComparisonToJson(const OutputComparison& comparison) {
  json worst = json::array();
  for (const Mismatch& m : comparison.worst) {
    worst.push_back({{"shape", m.shape_index}, {"set", m.input_set}, {"arg", m.arg}, {"index", m.index},
                     {"expected", DoubleToJson(m.expected)}, {"actual", DoubleToJson(m.actual)}});
  }
  return {{"ok", comparison.ok}, {"reason", comparison.reason}, {"details", comparison.details}, {"worst", worst}};
}

OutputComparison ComparisonFromJson(const json& in) {
  OutputComparison comparison;
  comparison.ok = in.at("ok").get<bool>();
  comparison.reason = in.at("reason").get<std::string>();
  comparison.details = in.at("details").get<std::string>();
  for (const auto& m : in.at("worst")) {
    comparison.worst.push_back({m.at("shape").get<int>(), m.at("set").get<int>(), m.at("arg").get<std::string>(),
                                m.at("index").get<std::int64_t>(), DoubleFromJson(m.at("expected")),
                                DoubleFromJson(m.at("actual"))});
  }
  return comparison;
}

}  // namespace

std::vector<OutputSegment> OutputSegments(const Job& job) {
  std::vector<OutputSegment> segments;
  std::uint64_t offset = 0;
  for (int s = 0; s < static_cast<int>(job.shapes.size()); ++s) {
    const auto& args = job.shapes[s].args;
    for (int set = 0; set < job.input_sets; ++set) {
      for (int a = 0; a < static_cast<int>(args.size()); ++a) {
        if (args[a].role != ArgRole::kOutput && args[a].role != ArgRole::kInOut) continue;
        const std::uint64_t bytes = static_cast<std::uint64_t>(args[a].count) * SizeOf(args[a].type);
        segments.push_back({s, set, a, offset, bytes});
        offset += bytes;
      }
    }
  }
  return segments;
}

PreparedLayout PrepareLayout(const Job& job) {
  PreparedLayout layout;
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  const auto mix = [&hash](std::uint64_t value) {
    for (int i = 0; i < 8; ++i) {
      hash ^= (value >> (8 * i)) & 0xff;
      hash *= 0x100000001b3ULL;
    }
  };
  const auto mix_double = [&mix](double value) {
    std::uint64_t bits = 0;
    static_assert(sizeof bits == sizeof value);
    std::memcpy(&bits, &value, sizeof bits);
    mix(bits);
  };
  mix(job.seed);
  mix(static_cast<std::uint64_t>(job.input_sets));
  mix(job.shapes.size());
  std::uint64_t offset = kPreparedHeaderBytes;
  for (int s = 0; s < static_cast<int>(job.shapes.size()); ++s) {
    const auto& args = job.shapes[s].args;
    mix(args.size());
    for (const auto& arg : args) {
      mix(static_cast<std::uint64_t>(arg.role));
      mix(static_cast<std::uint64_t>(arg.type));
      mix(static_cast<std::uint64_t>(arg.count));
      mix(static_cast<std::uint64_t>(arg.init.dist));
      for (double value : {arg.init.mean, arg.init.std, arg.init.lo, arg.init.hi}) mix_double(value);
    }
    for (int set = 0; set < job.input_sets; ++set) {
      for (int a = 0; a < static_cast<int>(args.size()); ++a) {
        if (args[a].role != ArgRole::kInput && args[a].role != ArgRole::kInOut) continue;
        const std::uint64_t bytes = static_cast<std::uint64_t>(args[a].count) * SizeOf(args[a].type);
        layout.segments.push_back({s, set, a, offset, bytes});
        offset += (bytes + 63) / 64 * 64;
      }
    }
  }
  layout.bytes = offset;
  layout.layout_hash = hash;
  return layout;
}

std::string JobToJson(const Job& job) {
  json out = {{"mode", job.mode},
              {"nonce", job.nonce},
              {"seed", job.seed},
              {"input_sets", job.input_sets},
              {"second_call", job.second_call},
              {"count_events", job.count_events},
              {"counted_calls", job.counted_calls},
              {"output_file", job.output_file.string()},
              {"min_time_s", job.min_time_s},
              {"min_samples", job.min_samples},
              {"buffer_sets", job.buffer_sets},
              {"flush_bytes", job.flush_bytes},
              {"timed_output_file", job.timed_output_file.string()},
              {"timed_shapes", job.timed_shapes},
              {"inputs_file", job.inputs_file.string()},
              {"prepare_inputs", job.prepare_inputs},
              {"reference_output_file", job.reference_output_file.string()},
              {"reference_timed_output_file", job.reference_timed_output_file.string()},
              {"worker", job.worker.string()},
              {"bwrap", job.bwrap},
              {"seccomp", job.seccomp},
              {"allow_threads", job.allow_threads},
              {"allow_jit", job.allow_jit},
              {"worker_env", job.worker_env},
              {"worker_wrapper", job.worker_wrapper},
              {"wrapper_file", job.wrapper_file},
              {"wrapper_output", job.wrapper_output.string()},
              {"wrapper_confine", job.wrapper_confine.string()},
              {"timeout_s", job.timeout_s},
              {"rtol", job.rtol},
              {"atol", job.atol}};
  out["libraries"] = json::array();
  for (const auto& library : job.libraries) out["libraries"].push_back(library.string());
  out["shapes"] = json::array();
  for (const auto& shape : job.shapes) {
    json args = json::array();
    for (const auto& arg : shape.args) args.push_back(ArgToJson(arg));
    out["shapes"].push_back({{"label", shape.label}, {"args", std::move(args)}});
  }
  return out.dump(1);
}

Result<Job> ParseJob(const std::string& text) {
  try {
    const json in = json::parse(text);
    Job job;
    job.mode = in.at("mode").get<std::string>();
    job.nonce = in.at("nonce").get<std::string>();
    job.seed = in.at("seed").get<std::uint64_t>();
    job.input_sets = in.at("input_sets").get<int>();
    job.second_call = in.value("second_call", true);
    job.count_events = in.value("count_events", std::vector<std::string>());
    job.counted_calls = in.value("counted_calls", 0);
    job.output_file = in.at("output_file").get<std::string>();
    job.min_time_s = in.at("min_time_s").get<double>();
    job.min_samples = in.at("min_samples").get<int>();
    job.buffer_sets = in.at("buffer_sets").get<int>();
    job.flush_bytes = in.value("flush_bytes", std::int64_t{0});
    job.timed_output_file = in.value("timed_output_file", std::string());
    job.timed_shapes = in.value("timed_shapes", 0);
    job.inputs_file = in.value("inputs_file", std::string());
    job.prepare_inputs = in.value("prepare_inputs", false);
    job.reference_output_file = in.value("reference_output_file", std::string());
    job.reference_timed_output_file = in.value("reference_timed_output_file", std::string());
    job.seccomp = in.value("seccomp", false);
    job.allow_threads = in.value("allow_threads", false);
    job.allow_jit = in.value("allow_jit", false);
    job.worker = in.value("worker", std::string());
    job.bwrap = in.value("bwrap", std::string());
    job.worker_env = in.value("worker_env", std::vector<std::string>());
    job.worker_wrapper = in.value("worker_wrapper", std::vector<std::string>());
    job.wrapper_file = in.value("wrapper_file", std::string());
    job.wrapper_output = in.value("wrapper_output", std::string());
    job.wrapper_confine = in.value("wrapper_confine", std::string());
    if (job.wrapper_file.find('/') != std::string::npos || job.wrapper_file == "..") {
      throw std::runtime_error("wrapper_file must be a plain file name");
    }
    job.timeout_s = in.value("timeout_s", 60.0);
    job.rtol = in.value("rtol", 1e-4);
    job.atol = in.value("atol", 1e-7);
    for (const auto& library : in.at("libraries")) job.libraries.emplace_back(library.get<std::string>());
    for (const auto& shape : in.at("shapes")) {
      JobShape parsed;
      parsed.label = shape.at("label").get<std::string>();
      for (const auto& arg : shape.at("args")) parsed.args.push_back(ArgFromJson(arg));
      job.shapes.push_back(std::move(parsed));
    }
    if (job.mode != "outputs" && job.mode != "time" && job.mode != "evaluate") {
      throw std::runtime_error("unknown mode '" + job.mode + "'");
    }
    if (job.timed_shapes < 0 || job.timed_shapes > static_cast<int>(job.shapes.size())) {
      throw std::runtime_error("timed_shapes must be between 0 and the number of shapes");
    }
    for (const std::string& event : job.count_events) {
      if (FindCounterEvent(event) == nullptr) throw std::runtime_error("unknown counter event '" + event + "'");
    }
    if (job.counted_calls < 0 || job.counted_calls > 100000) {
      throw std::runtime_error("counted_calls must be between 0 and 100000");
    }
    if (job.counted_calls > 0 && (job.count_events.empty() || job.mode != "outputs")) {
      throw std::runtime_error("counted_calls needs count_events and the outputs mode");
    }
    if (job.prepare_inputs && job.inputs_file.empty()) throw std::runtime_error("prepare_inputs needs an inputs_file");
    if (job.flush_bytes < 0 || job.flush_bytes > (std::int64_t{1} << 34)) {
      throw std::runtime_error("flush_bytes must be between 0 and 16 GiB");
    }
    if (job.input_sets < 1 || job.buffer_sets < 1 || job.min_samples < 1) {
      throw std::runtime_error("input_sets, buffer_sets and min_samples must be positive");
    }
    return job;
  } catch (const std::exception& e) {
    return Fail(Error::InvalidArgument(std::string("bad job: ") + e.what()));
  }
}

std::string JobResultToJson(const JobResult& result) {
  json out = {{"nonce", result.nonce},
              {"error", result.error},
              {"verdict", result.verdict},
              {"verdict_reason", result.verdict_reason},
              {"verdict_phase", result.verdict_phase}};
  out["checks"] = json::array();
  for (const auto& check : result.checks) {
    out["checks"].push_back({{"shape", check.shape_index},
                             {"set", check.input_set},
                             {"inputs_modified", check.inputs_modified},
                             {"nondeterministic", check.nondeterministic}});
  }
  out["timings"] = json::array();
  for (const auto& timing : result.timings) {
    out["timings"].push_back({{"candidate", timing.candidate},
                              {"reference", timing.reference},
                              {"candidate_batch", timing.candidate_batch},
                              {"reference_batch", timing.reference_batch},
                              {"flushes", timing.flushes}});
  }
  if (result.outputs_compared) out["outputs_compared"] = ComparisonToJson(*result.outputs_compared);
  if (result.timed_compared) out["timed_compared"] = ComparisonToJson(*result.timed_compared);
  if (!result.counts.empty() || !result.counts_error.empty()) {
    json counts = json::array();
    for (const EventCount& count : result.counts) {
      counts.push_back({{"name", count.name},
                        {"value", count.value},
                        {"raw", count.raw},
                        {"enabled_s", count.enabled_s},
                        {"running_s", count.running_s}});
    }
    out["counts"] = std::move(counts);
    out["counts_error"] = result.counts_error;
  }
  return out.dump();
}

Result<JobResult> ParseJobResult(const std::string& text) {
  try {
    const json in = json::parse(text);
    JobResult result;
    result.nonce = in.at("nonce").get<std::string>();
    result.error = in.at("error").get<std::string>();
    result.verdict = in.value("verdict", std::string());
    result.verdict_reason = in.value("verdict_reason", std::string());
    result.verdict_phase = in.value("verdict_phase", std::string());
    for (const auto& check : in.at("checks")) {
      SetCheck parsed;
      parsed.shape_index = check.at("shape").get<int>();
      parsed.input_set = check.at("set").get<int>();
      parsed.inputs_modified = check.at("inputs_modified").get<std::vector<std::string>>();
      parsed.nondeterministic = check.at("nondeterministic").get<bool>();
      result.checks.push_back(std::move(parsed));
    }
    for (const auto& timing : in.at("timings")) {
      ShapeSamples parsed;
      parsed.candidate = timing.at("candidate").get<std::vector<double>>();
      parsed.reference = timing.at("reference").get<std::vector<double>>();
      parsed.candidate_batch = timing.at("candidate_batch").get<std::int64_t>();
      parsed.reference_batch = timing.at("reference_batch").get<std::int64_t>();
      parsed.flushes = timing.value("flushes", std::int64_t{0});
      result.timings.push_back(std::move(parsed));
    }
    if (in.contains("outputs_compared")) result.outputs_compared = ComparisonFromJson(in.at("outputs_compared"));
    if (in.contains("timed_compared")) result.timed_compared = ComparisonFromJson(in.at("timed_compared"));
    if (in.contains("counts")) {
      for (const auto& count : in.at("counts")) {
        EventCount parsed;
        parsed.name = count.at("name").get<std::string>();
        parsed.value = count.at("value").get<double>();
        parsed.raw = count.at("raw").get<double>();
        parsed.enabled_s = count.at("enabled_s").get<double>();
        parsed.running_s = count.at("running_s").get<double>();
        result.counts.push_back(std::move(parsed));
      }
      result.counts_error = in.value("counts_error", std::string());
    }
    return result;
  } catch (const std::exception& e) {
    return Fail(Error::InvalidArgument(std::string("malformed runner result: ") + e.what()));
  }
}

std::string HostToJson(const HostInfo& host) {
  return json{{"name", host.name},         {"cpu_model", host.cpu_model}, {"cores", host.cores},
              {"isa", host.isa},           {"l1d_bytes", host.l1d_bytes}, {"l2_bytes", host.l2_bytes},
              {"l3_bytes", host.l3_bytes}, {"memory_bytes", host.memory_bytes}, {"os", host.os}}
      .dump();
}

Result<HostInfo> ParseHost(const std::string& text) {
  try {
    const json in = json::parse(text);
    HostInfo host;
    host.name = in.at("name").get<std::string>();
    host.cpu_model = in.at("cpu_model").get<std::string>();
    host.cores = in.at("cores").get<int>();
    host.isa = in.at("isa").get<std::string>();
    host.l1d_bytes = in.at("l1d_bytes").get<std::int64_t>();
    host.l2_bytes = in.at("l2_bytes").get<std::int64_t>();
    host.l3_bytes = in.at("l3_bytes").get<std::int64_t>();
    host.memory_bytes = in.at("memory_bytes").get<std::int64_t>();
    host.os = in.at("os").get<std::string>();
    return host;
  } catch (const std::exception& e) {
    return Fail(Error::InvalidArgument(std::string("malformed host report: ") + e.what()));
  }
}

}  // namespace kestrel
