#include "report/node_page.h"

#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/diff.h"
#include "llm/analysis.h"
#include "report/html.h"
#include "report/report_model.h"

namespace kestrel::report {
namespace {

std::string Time(double seconds) {
  if (seconds <= 0) return "-";
  if (seconds < 1e-3) return fmt::format("{:.3g} µs", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.3g} ms", seconds * 1e3);
  return fmt::format("{:.3g} s", seconds);
}

// The page's facts, one (name, HTML) row each: a person's notes, labels and
// review state join here as rows of their own.
std::vector<std::pair<std::string, std::string>> Facts(const NodePage& page) {
  const NodeRecord& node = page.node;
  std::vector<std::pair<std::string, std::string>> facts;
  facts.emplace_back("status", "<span class=\"status s-" + std::string(ToString(node.status)) + "\">" +
                                   std::string(ToString(node.status)) + "</span>" +
                                   (node.reason.empty() ? "" : " — " + Escape(node.reason)));
  if (node.speedup) facts.emplace_back("speedup", "<span class=\"speedup\">" + Speedup(*node.speedup) + "</span>");
  facts.emplace_back("mutation", Escape(node.mutation));
  if (page.made_by) {
    facts.emplace_back("made from", NodeLink(page.made_by->parent) + " by a " +
                                        std::string(ToString(page.made_by->kind)) + " edge");
  }
  facts.emplace_back("knobs", node.knobs.empty() ? "-" : Escape(ToString(node.knobs)));
  std::string flags;
  for (const std::string& flag : node.flags) flags += (flags.empty() ? "" : " ") + flag;
  facts.emplace_back("toolchain", Escape(node.toolchain + (flags.empty() ? "" : " " + flags)));
  facts.emplace_back("run", node.run_id ? std::to_string(node.run_id) : "-");
  facts.emplace_back("created", Timestamp(node.created_at));
  facts.emplace_back("cost", fmt::format("{} building and timing, ${:.4f} of LLM calls ({})", Time(page.eval_seconds),
                                         page.llm_usd, page.llm_calls.size()));
  // What people did to it: its label (the newest), its notes, the rest.
  std::string label, notes, others;
  for (const HumanActionRecord& action : page.actions) {
    const std::string by = " <span class=\"muted\">— " + Escape(action.author) + ", " + Timestamp(action.created_at) +
                           "</span>";
    if (action.kind == HumanActionKind::kLabel) {
      label = "<span class=\"label\">" + Escape(action.text) + "</span>" + by;
    } else if (action.kind == HumanActionKind::kNote) {
      notes += "<div class=\"note\">" + Escape(action.text) + by + "</div>";
    } else {
      others += "<div class=\"action\">" + std::string(ToString(action.kind)) +
                (action.text.empty() ? "" : ": " + Escape(action.text)) + by + "</div>";
    }
  }
  if (!label.empty()) facts.emplace_back("label", label);
  if (!notes.empty()) facts.emplace_back("notes", notes);
  if (!others.empty()) facts.emplace_back("people", others);
  return facts;
}

std::string Measurements(const NodePage& page) {
  if (page.measurements.empty()) return "<p class=\"muted\">Not measured.</p>";
  std::string html = "<table class=\"measurements\"><tr><th>id</th><th>purpose</th><th>outcome</th><th>shape</th>"
                     "<th>candidate</th><th>reference</th><th>speedup</th><th>GFLOP/s</th><th>GB/s</th>"
                     "<th>roofline</th><th>taken</th></tr>";
  for (const MeasurementRecord& record : page.measurements) {
    const Measurement& m = record.measurement;
    const std::string head =
        fmt::format("<td>{0}</td><td>{1}</td><td><span class=\"status s-{2}\">{2}</span></td>", record.id,
                    Escape(record.purpose), ToString(m.outcome));
    const std::string taken = "<td>" + Timestamp(record.created_at) + "</td>";
    if (m.shapes.empty()) {
      html += "<tr>" + head + "<td colspan=\"7\">" + Escape(m.reason) + "</td>" + taken + "</tr>";
      continue;
    }
    for (std::size_t k = 0; k < m.shapes.size(); ++k) {
      const ShapeTiming& s = m.shapes[k];
      html += "<tr>" + (k == 0 ? head : "<td></td><td></td><td></td>") + "<td>" + Escape(ToString(s.shape)) +
              "</td><td>" + Time(s.candidate.median) + "</td><td>" + Time(s.reference.median) + "</td><td>" +
              Speedup(s.speedup) + "</td><td>" + (s.gflops > 0 ? Number(s.gflops) : "-") + "</td><td>" +
              (s.gbps > 0 ? Number(s.gbps) : "-") + "</td><td>" + Percent(s.roofline_fraction) + "</td>" +
              (k == 0 ? taken : "<td></td>") + "</tr>";
    }
    if (m.shapes.size() > 1) {
      html += "<tr class=\"total\"><td></td><td></td><td></td><td>geometric mean</td><td></td><td></td><td>" +
              Speedup(m.speedup) + "</td><td></td><td></td><td>" + Percent(m.roofline_fraction) + "</td><td></td></tr>";
    }
  }
  return html + "</table>";
}

// A stored prompt is a JSON array of {role, content}; shown message by message.
std::string Prompt(const std::string& prompt) {
  const auto messages = nlohmann::json::parse(prompt, nullptr, false);
  if (!messages.is_array()) return "<pre class=\"text\">" + Escape(prompt) + "</pre>";
  std::string html;
  for (const auto& message : messages) {
    const std::string role = message.is_object() ? message.value("role", std::string("?")) : "?";
    const auto& content = message.is_object() && message.contains("content") ? message["content"] : message;
    html += "<div class=\"message\"><span class=\"role\">" + Escape(role) + "</span><pre class=\"text\">" +
            Escape(content.is_string() ? content.get<std::string>() : content.dump()) + "</pre></div>";
  }
  return html;
}

// The calls with (`analysis`) or without their purpose being the analysis of this node.
// The analyst's reply read as ParseAnalysis reads it for the prompts: the
// bottlenecks with their evidence, the recommendations ranked. "" when the
// reply holds no analysis (the raw reply above still shows it).
std::string AnalysisHtml(const std::string& reply) {
  const auto parsed = ParseAnalysis(reply);
  if (!parsed) return "";
  std::string html = "<div class=\"analysis\">";
  if (!parsed->bottlenecks.empty()) {
    html += "<table class=\"bottlenecks\"><tr><th>bottleneck</th><th>evidence</th></tr>";
    for (const Bottleneck& bottleneck : parsed->bottlenecks) {
      html += "<tr><td>" + Escape(bottleneck.name) + "</td><td>" + Escape(bottleneck.evidence) + "</td></tr>";
    }
    html += "</table>";
  }
  html += "<ol class=\"recommendations\">";
  for (const Recommendation& recommendation : parsed->recommendations) {
    html += "<li>" + Escape(recommendation.change) +
            (recommendation.expected_gain.empty() ? "" : " <span class=\"muted\">(expected: " +
                                                             Escape(recommendation.expected_gain) + ")</span>") +
            "</li>";
  }
  return html + "</ol></div>";
}

std::string LlmCalls(const NodePage& page, bool analysis) {
  std::string html;
  for (const LlmCallRecord& call : page.llm_calls) {
    if ((call.purpose == "analysis") != analysis) continue;
    html += fmt::format("<details class=\"llm\"><summary>{} call {} — {} {}, {} + {} tokens, ${:.4f}, {:.1f} s{}</summary>",
                        Escape(call.purpose), call.id, Escape(call.provider), Escape(call.model), call.input_tokens,
                        call.output_tokens, call.cost_usd, call.latency_s,
                        call.error.empty() ? "" : ", error: " + Escape(call.error));
    html += "<h5>prompt</h5>" + Prompt(call.prompt) + "<h5>reply</h5><pre class=\"text\">" + Escape(call.response) +
            "</pre></details>";
    if (analysis && call.error.empty()) html += AnalysisHtml(call.response);
  }
  return html;
}

}  // namespace

// The live page's controls of a node: a text box, a label word, ban and pin.
static std::string Controls(std::int64_t node) {
  std::string labels;
  for (std::string_view word : kLabelWords) labels += "<option>" + std::string(word) + "</option>";
  return fmt::format(
      "<div class=\"act\" data-node=\"{0}\"><input class=\"act-text\" placeholder=\"a note on node {0}\" "
      "size=\"40\"><button onclick=\"kestrelAct(this, 'note')\">note</button> <select class=\"act-label\">{1}"
      "</select><button onclick=\"kestrelAct(this, 'label')\">label</button> "
      "<button onclick=\"kestrelAct(this, 'ban')\">ban</button><button onclick=\"kestrelAct(this, 'ban', 'undo')\">"
      "unban</button> <button onclick=\"kestrelAct(this, 'pin')\">pin</button><button "
      "onclick=\"kestrelAct(this, 'pin', 'undo')\">unpin</button> <span class=\"act-said muted\"></span></div>",
      node, labels);
}

std::string NodePageHtml(const NodePage& page, bool live) {
  const NodeRecord& node = page.node;
  std::string html = fmt::format("<section class=\"node-page\" id=\"{}\" data-node=\"{}\" data-status=\"{}\">",
                                 NodeAnchor(node.id), node.id, ToString(node.status));
  html += fmt::format("<h3>Node #{} <span class=\"status s-{}\">{}</span>{}</h3>", node.id, ToString(node.status),
                      ToString(node.status), node.speedup ? " " + Speedup(*node.speedup) : "");
  html += "<table class=\"facts\">";
  for (const auto& [name, value] : Facts(page)) html += "<tr><th>" + name + "</th><td>" + value + "</td></tr>";
  html += "</table>";
  if (live) html += Controls(node.id);
  html += "<h4>Measurements</h4>" + Measurements(page);
  if (page.profile) {
    html += "<h4>Profile</h4><pre class=\"text\">" + Escape(page.profile->digest) + "</pre>";
  }
  if (const std::string analysis = LlmCalls(page, true); !analysis.empty()) {
    html += "<h4>Analysis</h4><p class=\"muted\">What the analyst read in the profile, and the changes it "
            "recommended for this node's children.</p>" + analysis;
  }
  if (const std::string exchange = LlmCalls(page, false); !exchange.empty()) {
    html += "<h4>LLM exchange that made it</h4>" + exchange;
  }
  if (page.made_by) {
    html += "<h4>Diff against " + NodeLink(page.made_by->parent) + "</h4>" +
            DiffHtml(DiffLines(page.parent_source, node.source));
  }
  html += "<h4>Source</h4><pre class=\"source\">" + Escape(node.source) + "</pre>";
  if (!node.log.empty()) html += "<details><summary>log</summary><pre class=\"text\">" + Escape(node.log) + "</pre></details>";
  html += "<p class=\"back\"><a href=\"#top\">↑ top</a> · <a href=\"#graph\">graph</a></p></section>";
  return html;
}

}  // namespace kestrel::report
