#include "report/svg_charts.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "report/html.h"
#include "report/report_model.h"

namespace kestrel::report {
namespace {

constexpr double kWidth = 640, kHeight = 280;
constexpr double kLeft = 56, kRight = 16, kTop = 16, kBottom = 40;

// One axis: a value range mapped onto pixels, linear or logarithmic.
struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  double from = 0, to = 1;  // pixels
  bool whole = false;       // counts: no tick between integers

  double operator()(double v) const {
    const double a = log ? std::log10(lo) : lo, b = log ? std::log10(hi) : hi;
    const double x = log ? std::log10(std::max(v, lo)) : v;
    return from + (to - from) * (b == a ? 0.5 : (x - a) / (b - a));
  }
  // Tick values: powers of ten for a log axis, about five round steps otherwise.
  std::vector<double> Ticks() const {
    std::vector<double> ticks;
    if (log) {
      for (double t = std::pow(10.0, std::floor(std::log10(lo))); t <= hi * 1.0001; t *= 10) {
        if (t >= lo * 0.9999) ticks.push_back(t);
      }
      return ticks;
    }
    const double raw = (hi - lo) / 5;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw > 0 ? raw : 1)));
    double step = raw / magnitude < 2 ? magnitude : raw / magnitude < 5 ? 2 * magnitude : 5 * magnitude;
    if (whole) step = std::max(step, 1.0);
    for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push_back(t);
    return ticks;
  }
};

std::string TickLabel(double v) {
  if (std::abs(v) >= 1000) return fmt::format("{:.0f}", v);
  if (std::abs(v - std::round(v)) < 1e-9) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3g}", v);
}

std::string Open(const std::string& label) {
  return fmt::format("<svg class=\"chart\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">", kWidth, kHeight,
                     Escape(label));
}

// The frame, grid lines, tick labels and axis titles.
std::string Frame(const Axis& x, const Axis& y, const std::string& x_title, const std::string& y_title) {
  std::string svg = fmt::format("<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>", kLeft, kTop,
                                kWidth - kLeft - kRight, kHeight - kTop - kBottom);
  for (double t : x.Ticks()) {
    svg += fmt::format("<line class=\"grid\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\"/>"
                       "<text class=\"tick\" x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>",
                       x(t), kTop, kHeight - kBottom, kHeight - kBottom + 14, TickLabel(t));
  }
  for (double t : y.Ticks()) {
    svg += fmt::format("<line class=\"grid\" x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\"/>"
                       "<text class=\"tick\" x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>",
                       kLeft, kWidth - kRight, y(t), kLeft - 4, y(t) + 4, TickLabel(t));
  }
  svg += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", (kLeft + kWidth - kRight) / 2,
                     kHeight - 6, Escape(x_title));
  svg += fmt::format("<text class=\"axis\" transform=\"translate(14 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
                     (kTop + kHeight - kBottom) / 2, Escape(y_title));
  return svg;
}

std::string Empty(const std::string& label, const std::string& why) {
  return Open(label) + fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text></svg>",
                                   kWidth / 2, kHeight / 2, Escape(why));
}

Axis XAxis(double lo, double hi) { return {lo, hi > lo ? hi : lo + 1, false, kLeft, kWidth - kRight}; }
Axis YAxis(double lo, double hi, bool log) { return {lo, hi > lo ? hi : lo + 1, log, kHeight - kBottom, kTop}; }

// A point that opens its node's page, with a tooltip.
std::string Dot(double cx, double cy, std::int64_t node, const std::string& css, const std::string& title) {
  return fmt::format("<a href=\"#{}\"><circle class=\"{}\" data-node=\"{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\">"
                     "<title>{}</title></circle></a>",
                     NodeAnchor(node), css, node, cx, cy, Escape(title));
}

std::string Diamond(double cx, double cy, std::int64_t node, const std::string& title) {
  return fmt::format("<a href=\"#{0}\"><path class=\"confirmed\" data-node=\"{1}\" d=\"M{2:.1f} {3:.1f}l5 5l-5 5l-5 -5z\">"
                     "<title>{4}</title></path></a>",
                     NodeAnchor(node), node, cx, cy - 5, Escape(title));
}

// Progress against x(point): the measured dots, the best-so-far steps, the confirmed diamonds.
template <typename XOf, typename XOfConfirmed>
std::string Progress(const ReportModel& model, const std::string& label, const std::string& x_title, double x_lo,
                     double x_hi, XOf x_of, XOfConfirmed x_of_confirmed) {
  double top = 1.0;
  for (const ProgressPoint& p : model.progress) top = std::max(top, p.speedup);
  for (const ConfirmedPoint& c : model.confirmed) top = std::max(top, c.median);
  const Axis x = XAxis(x_lo, x_hi), y = YAxis(0, top * 1.1, false);
  std::string svg = Open(label) + Frame(x, y, x_title, "speedup over the reference");
  std::string steps;
  double best = 0;
  for (const ProgressPoint& p : model.progress) {
    if (p.outcome != Outcome::kMeasured) continue;
    if (p.speedup > best) {
      steps += fmt::format("{}{:.1f},{:.1f} ", steps.empty() ? "M" : "L", x(x_of(p)), best > 0 ? y(best) : y(p.speedup));
      steps += fmt::format("L{:.1f},{:.1f} ", x(x_of(p)), y(p.speedup));
      best = p.speedup;
    }
  }
  if (!steps.empty()) {
    steps += fmt::format("L{:.1f},{:.1f}", x(x_hi), y(best));
    svg += "<path class=\"best\" d=\"" + steps + "\"/>";
  }
  for (const ProgressPoint& p : model.progress) {
    if (p.outcome != Outcome::kMeasured) continue;
    svg += Dot(x(x_of(p)), y(p.speedup), p.node_id, "measured",
               fmt::format("#{}: {} (evaluation {})", p.node_id, Speedup(p.speedup), p.evaluation));
  }
  for (const ConfirmedPoint& c : model.confirmed) {
    svg += Diamond(x(x_of_confirmed(c)), y(c.median), c.node_id,
                   fmt::format("#{}: {} median, {}", c.node_id, Speedup(c.median), ToString(c.verdict)));
  }
  return svg + "</svg>";
}

double MinutesSince(std::int64_t start, std::int64_t at) { return static_cast<double>(at - start) / 60000.0; }

}  // namespace

const char* OutcomeColour(std::string_view outcome) {
  static const std::map<std::string_view, const char*> kColours = {
      {"measured", "#2e7d32"}, {"build_failed", "#8d6e63"}, {"wrong", "#c62828"},   {"crashed", "#6a1b9a"},
      {"timed_out", "#ef6c00"}, {"rejected", "#37474f"},    {"proposed", "#bdbdbd"}, {"built", "#90a4ae"}};
  const auto found = kColours.find(outcome);
  return found == kColours.end() ? "#9e9e9e" : found->second;
}

std::string ProgressByEvaluationSvg(const ReportModel& model) {
  const std::string label = "best speedup over evaluations";
  if (model.progress.empty()) return Empty(label, "no evaluations yet");
  return Progress(
      model, label, "evaluation", 0, static_cast<double>(model.progress.size()),
      [](const ProgressPoint& p) { return static_cast<double>(p.evaluation); },
      [](const ConfirmedPoint& c) { return static_cast<double>(c.evaluation); });
}

std::string ProgressByTimeSvg(const ReportModel& model) {
  const std::string label = "best speedup over time";
  if (model.progress.empty()) return Empty(label, "no evaluations yet");
  const std::int64_t start = model.progress.front().at;
  std::int64_t end = model.progress.back().at;
  for (const ConfirmedPoint& c : model.confirmed) end = std::max(end, c.at);
  return Progress(
      model, label, "minutes since the first evaluation", 0, MinutesSince(start, end),
      [start](const ProgressPoint& p) { return MinutesSince(start, p.at); },
      [start](const ConfirmedPoint& c) { return MinutesSince(start, c.at); });
}

std::string OutcomesOverTimeSvg(const ReportModel& model) {
  const std::string label = "outcomes over time";
  if (model.progress.empty()) return Empty(label, "no evaluations yet");
  constexpr int kBins = 24;
  constexpr std::array<Outcome, 6> kOutcomes = {Outcome::kMeasured, Outcome::kBuildFailed, Outcome::kWrong,
                                                Outcome::kCrashed,  Outcome::kTimedOut,    Outcome::kRejected};
  const std::int64_t start = model.progress.front().at;
  const double span = std::max(MinutesSince(start, model.progress.back().at), 1e-3);
  std::vector<std::array<int, 6>> bins(kBins, std::array<int, 6>{});
  for (const ProgressPoint& p : model.progress) {
    const int bin = std::min(kBins - 1, static_cast<int>(MinutesSince(start, p.at) / span * kBins));
    ++bins[bin][static_cast<int>(p.outcome)];
  }
  int most = 1;
  for (const auto& bin : bins) {
    int sum = 0;
    for (int count : bin) sum += count;
    most = std::max(most, sum);
  }
  const Axis x = XAxis(0, span);
  Axis y = YAxis(0, most, false);
  y.whole = true;
  std::string svg = Open(label) + Frame(x, y, "minutes since the first evaluation", "evaluations");
  const double width = (x.to - x.from) / kBins;
  for (int b = 0; b < kBins; ++b) {
    int below = 0;
    for (Outcome outcome : kOutcomes) {
      const int count = bins[b][static_cast<int>(outcome)];
      if (count == 0) continue;
      svg += fmt::format("<rect class=\"outcome\" data-outcome=\"{0}\" x=\"{1:.1f}\" y=\"{2:.1f}\" width=\"{3:.1f}\" "
                         "height=\"{4:.1f}\" fill=\"{5}\"><title>{0}: {6}</title></rect>",
                         ToString(outcome), x.from + b * width + 1, y(below + count), width - 2,
                         y(below) - y(below + count), OutcomeColour(ToString(outcome)), count);
      below += count;
    }
  }
  // The legend, above the frame: each outcome's colour.
  double lx = kLeft;
  for (Outcome outcome : kOutcomes) {
    svg += fmt::format("<rect x=\"{:.0f}\" y=\"{}\" width=\"9\" height=\"9\" fill=\"{}\"/><text class=\"tick\" x=\"{:.0f}\" "
                       "y=\"{}\">{}</text>",
                       lx, kTop - 12, OutcomeColour(ToString(outcome)), lx + 12, kTop - 4, ToString(outcome));
    lx += 14 + 7.0 * static_cast<double>(ToString(outcome).size());
  }
  return svg + "</svg>";
}

std::string RooflineSvg(const ReportModel& model) {
  const std::string label = "roofline of the host";
  if (!model.ceilings || !model.ceilings->ok()) return Empty(label, "the host was not calibrated: no ceilings");
  const Calibration& c = *model.ceilings;
  double i_lo = 1.0 / 64, i_hi = 64, g_lo = c.peak_gflops / 1000, g_hi = c.peak_gflops * 2;
  for (const RooflinePoint& p : model.roofline) {
    i_lo = std::min(i_lo, p.flops_per_byte / 2), i_hi = std::max(i_hi, p.flops_per_byte * 2);
    g_lo = std::min(g_lo, p.gflops / 2), g_hi = std::max(g_hi, p.gflops * 2);
  }
  const Axis x{i_lo, i_hi, true, kLeft, kWidth - kRight}, y{g_lo, g_hi, true, kHeight - kBottom, kTop};
  std::string svg = Open(label) + Frame(x, y, "arithmetic intensity (FLOP/byte)", "GFLOP/s");
  struct Level {
    const char* name;
    double gbps;
    const char* dash;  // each level its own line, named in the legend
  };
  const std::array<Level, 4> levels = {
      {{"DRAM", c.dram_gbps, "none"}, {"L3", c.l3_gbps, "7 3"}, {"L2", c.l2_gbps, "3 3"}, {"L1", c.l1_gbps, "1 3"}}};
  double legend_y = kHeight - kBottom - 10 - 14 * 3;
  for (const Level& level : levels) {
    if (level.gbps <= 0) continue;
    const double knee = c.peak_gflops / level.gbps;  // where this bandwidth meets the compute peak
    const double start = std::max(i_lo, g_lo / level.gbps);
    svg += fmt::format("<path class=\"ceiling\" stroke-dasharray=\"{}\" d=\"M{:.1f},{:.1f} L{:.1f},{:.1f} L{:.1f},{:.1f}\">"
                       "<title>{} {:.1f} GB/s</title></path>",
                       level.dash, x(start), y(start * level.gbps), x(knee), y(c.peak_gflops), x(i_hi),
                       y(c.peak_gflops), level.name, level.gbps);
    const double lx = kWidth - kRight - 120;
    svg += fmt::format("<path class=\"ceiling\" stroke-dasharray=\"{}\" d=\"M{:.1f},{:.1f} h24\"/>"
                       "<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\">{} {:.0f} GB/s</text>",
                       level.dash, lx, legend_y - 3, lx + 30, legend_y, level.name, level.gbps);
    legend_y += 14;
  }
  svg += fmt::format("<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">peak {:.1f} GFLOP/s</text>",
                     x(i_hi) - 4, y(c.peak_gflops) - 4, c.peak_gflops);
  for (const RooflinePoint& p : model.roofline) {
    svg += Dot(x(p.flops_per_byte), y(p.gflops), p.node_id, "measured",
               fmt::format("#{}: {:.2f} GFLOP/s at {:.3g} FLOP/byte, {}", p.node_id, p.gflops, p.flops_per_byte,
                           Speedup(p.speedup)));
  }
  return svg + "</svg>";
}

}  // namespace kestrel::report
