#include "report/report_page.h"

#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/graph_svg.h"
#include "report/html.h"
#include "report/node_page.h"
#include "report/page_style.h"
#include "report/report_model.h"
#include "report/svg_charts.h"

namespace kestrel::report {
namespace {

// "12 of 20", or "12" without a limit.
std::string Used(const std::string& used, const nlohmann::json& budget, const char* field) {
  if (!budget.is_object() || !budget.contains(field)) return used;
  const auto& limit = budget[field];
  return used + " of " + Escape(limit.is_string() ? limit.get<std::string>() : limit.dump());
}

std::string Runs(const ReportModel& model) {
  std::string html = "<table class=\"runs\"><tr><th>run</th><th>status</th><th>stop reason</th><th>started</th>"
                     "<th>active</th><th class=\"num\">evaluations</th><th class=\"num\">per hour</th>"
                     "<th class=\"num\">best</th><th class=\"num\">LLM spend</th><th>host</th></tr>";
  for (const RunView& view : model.runs) {
    const RunRecord& run = view.run;
    const auto config = nlohmann::json::parse(run.config_json, nullptr, false);
    const auto budget = config.is_object() && config.contains("budget") ? config["budget"] : nlohmann::json();
    html += fmt::format(
        "<tr data-run=\"{0}\"><td>{0}</td><td><span class=\"status s-{1}\">{1}</span></td><td>{2}</td><td>{3}</td>"
        "<td>{4}</td><td class=\"num\">{5}</td><td class=\"num\">{6:.0f}</td><td class=\"num\">{7}</td>"
        "<td class=\"num\">{8}</td><td>{9}</td></tr>",
        run.id, ToString(run.status), Escape(run.stop_reason.empty() ? "-" : run.stop_reason), Timestamp(run.started_at),
        Used(Duration(view.active_seconds), budget, "time"), Used(std::to_string(run.evaluations), budget, "evaluations"),
        view.evaluations_per_hour, run.best_speedup ? Speedup(*run.best_speedup) : "-",
        Used(fmt::format("${:.4f}", run.llm_usd), budget, "usd"), view.host ? Escape(view.host->info.name) : "-");
  }
  html += "</table>";
  for (const RunView& view : model.runs) {
    html += fmt::format("<details><summary>run {} config and host</summary><pre class=\"text\">{}</pre>", view.run.id,
                        Escape(nlohmann::json::parse(view.run.config_json, nullptr, false).dump(2)));
    if (view.host) {
      const HostInfo& host = view.host->info;
      html += fmt::format("<p>Host <b>{}</b>: {}, {} cores, {}; ISA {}.</p>", Escape(host.name), Escape(host.cpu_model),
                          host.cores, Escape(host.os), Escape(host.isa));
    }
    if (view.calibration) {
      const Calibration& c = *view.calibration;
      html += fmt::format("<p>Calibrated ceilings ({} thread{}): peak {:.1f} GFLOP/s; L1 {:.0f}, L2 {:.0f}, L3 {:.0f}, "
                          "DRAM {:.0f} GB/s.</p>",
                          c.threads, c.threads == 1 ? "" : "s", c.peak_gflops, c.l1_gbps, c.l2_gbps, c.l3_gbps,
                          c.dram_gbps);
    }
    html += "</details>";
  }
  return html;
}

std::string Confidence(const BestRow& row) {
  if (row.confirmation == ConfirmationVerdict::kUnstable) return "unstable";
  const std::string word = row.confirmation == ConfirmationVerdict::kConfirmed || row.confirmation == ConfirmationVerdict::kFinal
                               ? "confirmed"
                           : row.confirmation == ConfirmationVerdict::kWithinNoise ? "within noise"
                           : row.measurements > 1                                  ? "re-measured"
                                                                                   : "once";
  if (row.measurements <= 1) return word;
  return fmt::format("{} (n={}, ±{:.1f}%)", word, row.measurements, row.spread * 100.0);
}

// The top candidates: one column per entry, so a person's labels or a
// review state are one more entry.
std::string Top(const ReportModel& model) {
  if (model.top.empty()) return "<p class=\"muted\">No measured candidate yet.</p>";
  struct Column {
    const char* name;
    bool numeric;
    std::string (*cell)(const BestRow&);
  };
  static const Column kColumns[] = {
      {"node", false, [](const BestRow& r) { return NodeLink(r.node_id); }},
      {"speedup", true, [](const BestRow& r) { return "<span class=\"speedup\">" + Speedup(r.speedup) + "</span>"; }},
      {"confidence", false, [](const BestRow& r) { return Confidence(r); }},
      {"roofline", true, [](const BestRow& r) { return Percent(r.roofline_fraction); }},
      {"vs baseline", true,
       [](const BestRow& r) {
         const double over = SpeedupOverBaseline(r.speedup, r.baseline_speedup);
         return over > 0 ? Speedup(over) : std::string("-");
       }},
      {"run", true, [](const BestRow& r) { return std::to_string(r.run_id); }},
      {"host", false, [](const BestRow& r) { return Escape(r.host_name); }},
      {"knobs or mutation", false,
       [](const BestRow& r) { return Escape(r.knobs.empty() ? r.mutation : ToString(r.knobs)); }},
  };
  // A person's word on the row: its label, or that it awaits one.
  std::map<std::int64_t, std::string> review;
  for (const ReviewItem& item : model.awaiting_review) {
    review[item.node_id] = "<span class=\"awaiting\">awaiting review</span> (" + Escape(item.reason) + ")";
  }
  for (const NodePage& page : model.pages) {
    for (const HumanActionRecord& action : page.actions) {
      if (action.kind == HumanActionKind::kLabel) review[page.node.id] = "<span class=\"label\">" + Escape(action.text) + "</span>";
    }
  }
  std::string html = "<table class=\"top\"><tr><th class=\"num\">rank</th>";
  for (const Column& column : kColumns) html += std::string("<th") + (column.numeric ? " class=\"num\">" : ">") + column.name + "</th>";
  html += "<th>review</th></tr>";
  int rank = 0;
  for (const BestRow& row : model.top) {
    html += fmt::format("<tr class=\"top-row\" data-node=\"{}\" data-speedup=\"{:.6f}\"><td class=\"num\">{}</td>",
                        row.node_id, row.speedup, ++rank);
    for (const Column& column : kColumns) {
      html += std::string("<td") + (column.numeric ? " class=\"num\">" : ">") + column.cell(row) + "</td>";
    }
    const auto word = review.find(row.node_id);
    html += "<td class=\"review\">" + (word == review.end() ? std::string("-") : word->second) + "</td></tr>";
  }
  return html + "</table>";
}

std::string Summary(const ReportModel& model) {
  std::int64_t measured = 0;
  for (const ProgressPoint& point : model.progress) measured += point.outcome == Outcome::kMeasured;
  return fmt::format("<p class=\"summary\" data-evaluations=\"{3}\" data-nodes=\"{2}\">Task <b>{0}</b>, graph {1}: "
                     "{2} nodes, {3} evaluations ({4} measured){5}. Generated {6}.</p>",
                     Escape(model.task_name), model.graph_id, model.nodes.size(), model.progress.size(), measured,
                     model.top.empty() ? "" : ", best " + Speedup(model.top.front().speedup) + " (" +
                                                  NodeLink(model.top.front().node_id) + ")",
                     Timestamp(model.generated_at));
}

// <!DOCTYPE ...> up to the opening <body>, with the live script when asked.
std::string Head(const std::string& title, const PageOptions& options) {
  const bool live = !options.version_url.empty();
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                     "<title>" + Escape(title) + "</title><style>" + kPageCss + "</style>";
  if (live) {
    html += "<meta name=\"kestrel-version-url\" content=\"" + Escape(options.version_url) + "\">";
    html += "<meta name=\"kestrel-version\" content=\"" + Escape(options.version) + "\">";
    html += std::string("<script>") + kLiveScript + kActScript + "</script>";
  }
  html += std::string("<script>") + kPrintScript + "</script></head><body id=\"top\">";
  if (live) {
    // Writes need the server's token (kept in this tab's sessionStorage, sent in a header, never in a URL).
    html += "<span class=\"live\">live</span><div class=\"people-bar\">token <input id=\"kestrel-token\" "
            "type=\"password\" size=\"16\" onchange=\"kestrelKeep(this)\"> as <input id=\"kestrel-author\" size=\"12\" "
            "placeholder=\"web\" onchange=\"kestrelKeep(this)\"></div>";
  }
  return html + options.preface_html;
}

}  // namespace

std::string NoRunsHtml(const PageOptions& options) {
  return Head("Kestrel: no runs yet", options) +
         "<h1>Kestrel</h1><p class=\"summary\" data-evaluations=\"0\" data-nodes=\"0\">The database has no runs yet. "
         "Start one with <code>kestrel run</code>" +
         (options.version_url.empty() ? "." : "; this page shows it as soon as it starts.") + "</p></body></html>\n";
}

std::string ReportHtml(const ReportModel& model, const PageOptions& options) {
  std::string html = Head("Kestrel report: " + model.task_name, options);
  html += "<h1>Kestrel report: " + Escape(model.task_name) + "</h1>" + Summary(model);
  html += "<nav><a href=\"#runs\">runs</a><a href=\"#progress\">progress</a><a href=\"#roofline\">roofline</a>"
          "<a href=\"#graph\">graph</a><a href=\"#top-candidates\">top candidates</a><a href=\"#nodes\">nodes</a></nav>";
  html += "<section id=\"runs\"><h2>Runs</h2>" + Runs(model) + "</section>";
  html += "<section id=\"progress\"><h2>Progress</h2><p class=\"muted\">Dots: single measurements; line: the best so "
          "far; diamonds: medians after a confirmation round.</p><div class=\"charts\">" +
          ProgressByEvaluationSvg(model) + ProgressByTimeSvg(model) + OutcomesOverTimeSvg(model) + "</div></section>";
  html += "<section id=\"roofline\"><h2>Roofline</h2><p class=\"muted\">The host's measured ceilings (compute peak, "
          "bandwidth of each memory level) and every measured node at its arithmetic intensity and throughput "
          "(geometric means over the timed shapes).</p><div class=\"charts single\">" +
          RooflineSvg(model) + "</div></section>";
  html += "<section id=\"graph\"><h2>Search graph</h2><p class=\"muted\">Green: measured (darker: faster); border: "
          "outcome; dashed red: fix; dotted: duplicate or same code. Click a node for its page.</p>" +
          GraphSvg(model) + "</section>";
  html += "<section id=\"top-candidates\"><h2>Top candidates</h2>" + Top(model) + "</section>";
  html += "<section id=\"nodes\"><h2>Nodes</h2>";
  for (const NodePage& page : model.pages) html += NodePageHtml(page, !options.version_url.empty());
  html += "</section></body></html>\n";
  return html;
}

}  // namespace kestrel::report
