#include "core/profile.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kestrel {
namespace {

using nlohmann::json;

void PutOptional(json& out, const char* key, const std::optional<double>& value) {
  if (value) out[key] = *value;
}

// A profile comes from a command evaluator's harness too (the answer's
// "profile"), that is, from the kernel's side: each figure is a finite,
// non-negative number of sane size, each count an integer an int holds.
// (1e308 printed as "inf% of the roofline" in prompts; 2147483647.0 became
// -2147483648 instructions.)
constexpr double kLargestFigure = 1e18;

Result<double> Figure(const json& value, const char* key, const std::string& where) {
  if (!value.is_number()) return Fail(Error::InvalidArgument(where + "." + key + ": wrong type"));
  const double number = value.get<double>();
  if (!std::isfinite(number) || number < 0 || number > kLargestFigure) {
    return Fail(Error::InvalidArgument(where + "." + key + ": expected a number from 0 to 1e18, got " + value.dump()));
  }
  return number;
}

Result<std::optional<double>> GetOptional(const json& in, const char* key, const std::string& where) {
  if (!in.contains(key) || in[key].is_null()) return std::optional<double>();
  if (!in[key].is_number()) return Fail(Error::InvalidArgument(where + "." + key + ": not a number"));
  auto figure = Figure(in[key], key, where);
  if (!figure) return Fail(figure.error());
  return std::optional<double>(*figure);
}

Result<double> GetFigure(const json& in, const char* key, const std::string& where, double fallback) {
  if (!in.contains(key)) return fallback;
  return Figure(in[key], key, where);
}

Result<int> GetCount(const json& in, const char* key, const std::string& where, int fallback) {
  if (!in.contains(key)) return fallback;
  const json& value = in[key];
  if (!value.is_number_integer()) return Fail(Error::InvalidArgument(where + "." + key + ": wrong type"));
  if (value.is_number_unsigned() ? value.get<std::uint64_t>() > 2147483647ULL
                                 : value.get<std::int64_t>() < 0 || value.get<std::int64_t>() > 2147483647LL) {
    return Fail(Error::InvalidArgument(where + "." + key + ": expected an integer from 0 to 2147483647, got " +
                                       value.dump()));
  }
  return static_cast<int>(value.get<std::int64_t>());
}

template <typename T>
Result<T> Get(const json& in, const char* key, const std::string& where, T fallback) {
  if (!in.contains(key)) return fallback;
  try {
    return in[key].get<T>();
  } catch (const json::exception&) {
    return Fail(Error::InvalidArgument(where + "." + key + ": wrong type"));
  }
}

#define KESTREL_TAKE(target, expr)                      \
  do {                                                  \
    auto taken_ = (expr);                               \
    if (!taken_) return Fail(taken_.error());           \
    target = std::move(*taken_);                        \
  } while (false)

// The largest shape this much slower per element than the smallest is
// called cache-bound in the digest (and the other way round noted too).
constexpr double kCacheBoundRatio = 1.3;

// " (ymm)" for 256 bits: the register name the LLM knows the code by.
std::string RegisterName(int bits) {
  return bits == 512 ? " (zmm)" : bits == 256 ? " (ymm)" : bits == 128 ? " (xmm)" : "";
}

std::string Number(double value) {
  if (value == 0) return "0";
  const double magnitude = std::fabs(value);
  if (magnitude >= 100) return fmt::format("{:.0f}", value);
  if (magnitude >= 1) return fmt::format("{:.2f}", value);
  return fmt::format("{:.3g}", value);
}

}  // namespace

json ProfileToJson(const Profile& profile) {
  json out = json::object();
  if (const auto& r = profile.roofline) {
    out["roofline"] = {{"shape", r->shape},           {"intensity", r->intensity},
                       {"gflops", r->gflops},         {"gbps", r->gbps},
                       {"peak_gflops", r->peak_gflops}, {"bandwidth_gbps", r->bandwidth_gbps},
                       {"level", r->level},           {"bound", r->bound},
                       {"fraction", r->fraction}};
  }
  if (const auto& c = profile.counters) {
    json counters = {{"source", c->source}, {"shape", c->shape}};
    PutOptional(counters, "cycles", c->cycles);
    PutOptional(counters, "instructions", c->instructions);
    PutOptional(counters, "ipc", c->ipc);
    PutOptional(counters, "d1_miss_rate", c->d1_miss_rate);
    PutOptional(counters, "ll_miss_rate", c->ll_miss_rate);
    PutOptional(counters, "cache_misses", c->cache_misses);
    PutOptional(counters, "branch_misses", c->branch_misses);
    out["counters"] = std::move(counters);
  }
  if (const auto& m = profile.mix) {
    out["mix"] = {{"total", m->total},         {"packed_fp", m->packed_fp},
                  {"scalar_fp", m->scalar_fp}, {"vector_bits", m->vector_bits},
                  {"isa_vector_bits", m->isa_vector_bits}, {"divisions", m->divisions},
                  {"gathers", m->gathers},     {"fma", m->fma},
                  {"calls", m->calls}};
  }
  if (const auto& r = profile.remarks) {
    out["remarks"] = {{"compiler", r->compiler}, {"vectorized", r->vectorized}, {"missed", r->missed}};
  }
  json scaling = json::array();
  for (const auto& point : profile.scaling) {
    scaling.push_back({{"shape", point.shape}, {"elements", point.elements}, {"ns_per_element", point.ns_per_element}});
  }
  out["scaling"] = std::move(scaling);
  out["unavailable"] = profile.unavailable;
  out["seconds"] = profile.seconds;
  json costs = json::array();
  for (const auto& cost : profile.costs) costs.push_back({{"source", cost.source}, {"seconds", cost.seconds}});
  out["costs"] = std::move(costs);
  return out;
}

Result<Profile> ProfileFromJson(const json& in) {
  if (!in.is_object()) return Fail(Error::InvalidArgument("profile: not a JSON object"));
  Profile profile;
  if (in.contains("roofline") && !in["roofline"].is_null()) {
    const json& r = in["roofline"];
    const std::string where = "profile.roofline";
    if (!r.is_object()) return Fail(Error::InvalidArgument(where + ": not an object"));
    RooflinePosition position;
    KESTREL_TAKE(position.shape, Get<std::string>(r, "shape", where, ""));
    KESTREL_TAKE(position.intensity, GetFigure(r, "intensity", where, 0.0));
    KESTREL_TAKE(position.gflops, GetFigure(r, "gflops", where, 0.0));
    KESTREL_TAKE(position.gbps, GetFigure(r, "gbps", where, 0.0));
    KESTREL_TAKE(position.peak_gflops, GetFigure(r, "peak_gflops", where, 0.0));
    KESTREL_TAKE(position.bandwidth_gbps, GetFigure(r, "bandwidth_gbps", where, 0.0));
    KESTREL_TAKE(position.level, Get<std::string>(r, "level", where, ""));
    KESTREL_TAKE(position.bound, Get<std::string>(r, "bound", where, ""));
    KESTREL_TAKE(position.fraction, GetFigure(r, "fraction", where, 0.0));
    profile.roofline = std::move(position);
  }
  if (in.contains("counters") && !in["counters"].is_null()) {
    const json& c = in["counters"];
    const std::string where = "profile.counters";
    if (!c.is_object()) return Fail(Error::InvalidArgument(where + ": not an object"));
    CounterProfile counters;
    KESTREL_TAKE(counters.source, Get<std::string>(c, "source", where, ""));
    KESTREL_TAKE(counters.shape, Get<std::string>(c, "shape", where, ""));
    KESTREL_TAKE(counters.cycles, GetOptional(c, "cycles", where));
    KESTREL_TAKE(counters.instructions, GetOptional(c, "instructions", where));
    KESTREL_TAKE(counters.ipc, GetOptional(c, "ipc", where));
    KESTREL_TAKE(counters.d1_miss_rate, GetOptional(c, "d1_miss_rate", where));
    KESTREL_TAKE(counters.ll_miss_rate, GetOptional(c, "ll_miss_rate", where));
    KESTREL_TAKE(counters.cache_misses, GetOptional(c, "cache_misses", where));
    KESTREL_TAKE(counters.branch_misses, GetOptional(c, "branch_misses", where));
    profile.counters = std::move(counters);
  }
  if (in.contains("mix") && !in["mix"].is_null()) {
    const json& m = in["mix"];
    const std::string where = "profile.mix";
    if (!m.is_object()) return Fail(Error::InvalidArgument(where + ": not an object"));
    InstructionMix mix;
    KESTREL_TAKE(mix.total, GetCount(m, "total", where, 0));
    KESTREL_TAKE(mix.packed_fp, GetCount(m, "packed_fp", where, 0));
    KESTREL_TAKE(mix.scalar_fp, GetCount(m, "scalar_fp", where, 0));
    KESTREL_TAKE(mix.vector_bits, GetCount(m, "vector_bits", where, 0));
    KESTREL_TAKE(mix.isa_vector_bits, GetCount(m, "isa_vector_bits", where, 0));
    KESTREL_TAKE(mix.divisions, GetCount(m, "divisions", where, 0));
    KESTREL_TAKE(mix.gathers, GetCount(m, "gathers", where, 0));
    KESTREL_TAKE(mix.fma, GetCount(m, "fma", where, 0));
    KESTREL_TAKE(mix.calls, Get<std::vector<std::string>>(m, "calls", where, {}));
    profile.mix = std::move(mix);
  }
  if (in.contains("remarks") && !in["remarks"].is_null()) {
    const json& r = in["remarks"];
    const std::string where = "profile.remarks";
    if (!r.is_object()) return Fail(Error::InvalidArgument(where + ": not an object"));
    CompilerRemarks remarks;
    KESTREL_TAKE(remarks.compiler, Get<std::string>(r, "compiler", where, ""));
    KESTREL_TAKE(remarks.vectorized, Get<std::vector<std::string>>(r, "vectorized", where, {}));
    KESTREL_TAKE(remarks.missed, Get<std::vector<std::string>>(r, "missed", where, {}));
    profile.remarks = std::move(remarks);
  }
  if (in.contains("scaling")) {
    if (!in["scaling"].is_array()) return Fail(Error::InvalidArgument("profile.scaling: not an array"));
    for (const json& point : in["scaling"]) {
      const std::string where = "profile.scaling[]";
      if (!point.is_object()) return Fail(Error::InvalidArgument(where + ": not an object"));
      ShapeScalingPoint p;
      KESTREL_TAKE(p.shape, Get<std::string>(point, "shape", where, ""));
      KESTREL_TAKE(p.elements, GetFigure(point, "elements", where, 0.0));
      KESTREL_TAKE(p.ns_per_element, GetFigure(point, "ns_per_element", where, 0.0));
      profile.scaling.push_back(std::move(p));
    }
  }
  KESTREL_TAKE(profile.unavailable, Get<std::vector<std::string>>(in, "unavailable", "profile", {}));
  KESTREL_TAKE(profile.seconds, GetFigure(in, "seconds", "profile", 0.0));
  if (in.contains("costs")) {
    if (!in["costs"].is_array()) return Fail(Error::InvalidArgument("profile.costs: not an array"));
    for (const json& item : in["costs"]) {
      const std::string where = "profile.costs[]";
      if (!item.is_object()) return Fail(Error::InvalidArgument(where + ": not an object"));
      ProfileCost cost;
      KESTREL_TAKE(cost.source, Get<std::string>(item, "source", where, ""));
      KESTREL_TAKE(cost.seconds, GetFigure(item, "seconds", where, 0.0));
      profile.costs.push_back(std::move(cost));
    }
  }
  return profile;
}

std::string ProfileDigest(const Profile& profile) {
  std::string out;
  if (const auto& r = profile.roofline) {
    if (r->peak_gflops > 0) {
      out += fmt::format("roofline ({}): {} of the roofline, {}-bound; intensity {} flop/byte; {} GFLOP/s of {} peak, "
                         "{} GB/s of {} GB/s ({} working set)\n",
                         r->shape, fmt::format("{:.0f}%", r->fraction * 100), r->bound.empty() ? "?" : r->bound,
                         Number(r->intensity), Number(r->gflops), Number(r->peak_gflops), Number(r->gbps),
                         Number(r->bandwidth_gbps), r->level.empty() ? "?" : r->level);
    } else {
      // No calibration of the host: what was achieved, without a fraction of nothing.
      out += fmt::format("roofline ({}): the host is not calibrated; intensity {} flop/byte; {} GFLOP/s, {} GB/s "
                         "achieved ({} working set)\n",
                         r->shape, Number(r->intensity), Number(r->gflops), Number(r->gbps),
                         r->level.empty() ? "?" : r->level);
    }
  }
  if (const auto& c = profile.counters) {
    std::string line = fmt::format("counters ({}, {}):", c->source, c->shape);
    const auto add = [&line](const char* name, const std::optional<double>& value, bool percent = false) {
      if (!value) return;
      line += percent ? fmt::format(" {} {:.2f}%,", name, *value * 100) : fmt::format(" {} {},", name, Number(*value));
    };
    add("cycles/elem", c->cycles);
    add("instructions/elem", c->instructions);
    add("IPC", c->ipc);
    add("D1 miss rate", c->d1_miss_rate, true);
    add("LL miss rate", c->ll_miss_rate, true);
    add("cache misses/elem", c->cache_misses);
    add("branch misses/elem", c->branch_misses);
    if (line.back() == ',') line.pop_back();
    out += line + "\n";
  }
  if (const auto& m = profile.mix) {
    const int fp = m->packed_fp + m->scalar_fp;
    out += fmt::format("code: {} instructions; floating point {} packed / {} scalar ({}% packed); {} FMA; widest "
                       "vector {} bits{} of {} available{}; {} divisions/sqrt; {} gathers",
                       m->total, m->packed_fp, m->scalar_fp, fp > 0 ? 100 * m->packed_fp / fp : 0, m->fma,
                       m->vector_bits, RegisterName(m->vector_bits), m->isa_vector_bits,
                       RegisterName(m->isa_vector_bits), m->divisions, m->gathers);
    if (!m->calls.empty()) {
      out += "; calls";
      for (const auto& call : m->calls) out += " " + call;
    }
    out += "\n";
  }
  if (const auto& r = profile.remarks) {
    static constexpr std::size_t kMaxRemarks = 4;
    const auto list = [&out](const char* title, const std::vector<std::string>& remarks) {
      if (remarks.empty()) return;
      out += title;
      for (std::size_t i = 0; i < std::min(remarks.size(), kMaxRemarks); ++i) out += "\n  " + remarks[i];
      if (remarks.size() > kMaxRemarks) out += fmt::format("\n  ... {} more", remarks.size() - kMaxRemarks);
      out += "\n";
    };
    out += fmt::format("compiler ({}): {} loops vectorized, {} not\n", r->compiler, r->vectorized.size(),
                       r->missed.size());
    list("vectorized:", r->vectorized);
    list("not vectorized:", r->missed);
  }
  if (!profile.scaling.empty()) {
    out += "time per element:";
    for (const auto& point : profile.scaling) out += fmt::format(" {} {} ns,", point.shape, Number(point.ns_per_element));
    out.pop_back();
    // Slower per element on a larger shape: its working set left a cache.
    // Slower on a smaller one: fixed costs per call, or cache conflicts of
    // its strides.
    const double first = profile.scaling.front().ns_per_element, last = profile.scaling.back().ns_per_element;
    if (profile.scaling.size() > 1 && first > 0 && last > kCacheBoundRatio * first) {
      out += fmt::format(" (the largest shape is {:.1f}x slower per element: cache-bound)", last / first);
    } else if (profile.scaling.size() > 1 && last > 0 && first > kCacheBoundRatio * last) {
      out += fmt::format(" (the smallest shape is {:.1f}x slower per element: fixed costs per call or cache "
                         "conflicts)", first / last);
    }
    out += "\n";
  }
  for (const auto& why : profile.unavailable) out += "not available: " + why + "\n";
  return out;
}

}  // namespace kestrel
