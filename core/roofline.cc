#include "core/roofline.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <utility>

#include <nlohmann/json.hpp>

namespace kestrel {

Calibration Merge(const Calibration& a, const Calibration& b) {
  Calibration merged = a;
  merged.peak_gflops = std::max(a.peak_gflops, b.peak_gflops);
  merged.l1_gbps = std::max(a.l1_gbps, b.l1_gbps);
  merged.l2_gbps = std::max(a.l2_gbps, b.l2_gbps);
  merged.l3_gbps = std::max(a.l3_gbps, b.l3_gbps);
  merged.dram_gbps = std::max(a.dram_gbps, b.dram_gbps);
  std::map<double, double> curve;
  for (const auto* points : {&a.curve, &b.curve}) {
    for (const BandwidthPoint& point : *points) curve[point.bytes] = std::max(curve[point.bytes], point.gbps);
  }
  merged.curve.clear();
  for (const auto& [bytes, gbps] : curve) merged.curve.push_back({bytes, gbps});
  merged.seconds = a.seconds + b.seconds;
  return merged;
}

double BandwidthFor(const Calibration& calibration, const HostInfo& host, double bytes) {
  // levels[i]: capacity and bandwidth, smallest first; DRAM holds everything.
  const std::array<std::pair<std::int64_t, double>, 4> levels = {{{host.l1d_bytes, calibration.l1_gbps},
                                                                  {host.l2_bytes, calibration.l2_gbps},
                                                                  {host.l3_bytes, calibration.l3_gbps},
                                                                  {0, calibration.dram_gbps}}};
  std::size_t level = levels.size() - 1;
  for (std::size_t i = 0; i + 1 < levels.size(); ++i) {
    if (levels[i].first > 0 && bytes <= static_cast<double>(levels[i].first)) {
      level = i;
      break;
    }
  }
  double gbps = 0.0;
  for (std::size_t i = level; i < levels.size(); ++i) gbps = std::max(gbps, levels[i].second);
  const std::vector<BandwidthPoint>& curve = calibration.curve;
  if (level < 2 || curve.empty() || bytes < curve.front().bytes) return gbps;
  // The largest measured size not above `bytes`, and every larger one.
  std::size_t from = 0;
  while (from + 1 < curve.size() && curve[from + 1].bytes <= bytes) ++from;
  double along = calibration.dram_gbps;
  for (std::size_t i = from; i < curve.size(); ++i) along = std::max(along, curve[i].gbps);
  return along;
}

std::string CurveJson(const std::vector<BandwidthPoint>& curve) {
  nlohmann::json points = nlohmann::json::array();
  for (const BandwidthPoint& point : curve) points.push_back({point.bytes, point.gbps});
  return points.dump();
}

Result<std::vector<BandwidthPoint>> ParseCurveJson(std::string_view text) {
  try {
    std::vector<BandwidthPoint> curve;
    for (const auto& point : nlohmann::json::parse(text)) {
      curve.push_back({point.at(0).get<double>(), point.at(1).get<double>()});
    }
    return curve;
  } catch (const nlohmann::json::exception& what) {
    return Fail(Error::InvalidArgument(std::string("bandwidth curve: ") + what.what()));
  }
}

const char* LevelFor(const HostInfo& host, double bytes) {
  if (host.l1d_bytes > 0 && bytes <= static_cast<double>(host.l1d_bytes)) return "L1";
  if (host.l2_bytes > 0 && bytes <= static_cast<double>(host.l2_bytes)) return "L2";
  if (host.l3_bytes > 0 && bytes <= static_cast<double>(host.l3_bytes)) return "L3";
  return "DRAM";
}

double RooflineSeconds(const Calibration& calibration, const HostInfo& host, std::optional<double> flops,
                       std::optional<double> bytes) {
  if (!calibration.ok()) return 0.0;
  double seconds = 0.0;
  if (flops && *flops > 0) seconds = std::max(seconds, *flops / (calibration.peak_gflops * 1e9));
  if (bytes && *bytes > 0) {
    const double gbps = BandwidthFor(calibration, host, *bytes);
    if (gbps > 0) seconds = std::max(seconds, *bytes / (gbps * 1e9));
  }
  return seconds;
}

}  // namespace kestrel
