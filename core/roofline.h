#pragma once
// The roofline of a host (EVALUATION.md, "Calibration and plausibility"): its
// measured peak FLOP/s and the bandwidth of each memory level, and the least
// time a kernel could take for the flops and bytes a task's formulas give.
//
//   bound(shape) = max(flops / peak, bytes / bandwidth(level))
//
// where `level` is the smallest one that holds `bytes` (L1, L2, L3, DRAM), and
// its bandwidth is the largest measured for that level or any larger one (a
// slower level measured faster is noise, not hardware): the most generous
// bandwidth a kernel with that working set could see, so the bound is
// conservative. roofline fraction = bound / measured time; a kernel
// at its hardware's limit is near 1, one that claims more than
// kImplausibleFraction is flagged and never ranked.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/host.h"

namespace kestrel {

// One point of the bandwidth curve: the rate (the faster of a read stream and
// a triad) over a working set of `bytes` in all (the threads' together).
struct BandwidthPoint {
  double bytes = 0.0;
  double gbps = 0.0;
  bool operator==(const BandwidthPoint&) const = default;
};

struct Calibration {
  int threads = 1;           // threads the peak and bandwidths were measured with
  double peak_gflops = 0.0;  // FP32 fused multiply-add throughput
  // Bandwidth of a working set of half of each level: the faster of one read
  // stream and a triad (two read streams, one written; 12 bytes an element).
  double l1_gbps = 0.0;
  double l2_gbps = 0.0;
  double l3_gbps = 0.0;
  double dram_gbps = 0.0;
  // At doubling working sets from twice L2 to 1 GiB, smallest first; empty in
  // a calibration measured before the curve (the levels alone then decide).
  std::vector<BandwidthPoint> curve;
  double seconds = 0.0;      // how long calibrating took

  bool ok() const { return peak_gflops > 0 && dram_gbps > 0; }
};

// A fraction above this is physically implausible: timing or correctness was fooled.
inline constexpr double kImplausibleFraction = 1.5;

// Each figure the larger of the two (a curve's point by point, by size): what
// both calibrations say the host can at least do.
Calibration Merge(const Calibration& a, const Calibration& b);

// Bandwidth (GB/s) a working set of `bytes` can see: the level's, or beyond L2
// the curve's (see above).
double BandwidthFor(const Calibration& calibration, const HostInfo& host, double bytes);

// The name of the smallest level of `host` that holds `bytes`: "L1", "L2", "L3" or "DRAM".
const char* LevelFor(const HostInfo& host, double bytes);

// The curve as JSON, [[bytes, gbps], ...] (the store's and the cache file's
// form), and back: InvalidArgument when `text` is not such an array.
std::string CurveJson(const std::vector<BandwidthPoint>& curve);
Result<std::vector<BandwidthPoint>> ParseCurveJson(std::string_view text);

// The roofline time in seconds; 0 when the calibration or both formulas are missing.
double RooflineSeconds(const Calibration& calibration, const HostInfo& host, std::optional<double> flops,
                       std::optional<double> bytes);

}  // namespace kestrel
