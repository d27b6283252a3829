#include "serve/review_panel.h"

#include <fmt/format.h>

#include "report/html.h"

namespace kestrel::serve {

std::string ReviewPanelHtml(const std::vector<ReviewQuestionRecord>& questions) {
  if (questions.empty()) return "";
  using report::Escape;
  std::string html = fmt::format(
      "<section id=\"review-questions\"><h2>Awaiting your review ({})</h2><p class=\"muted\">The run waits for "
      "each answer (the terminal may answer first). Accept the proposal as it is, accept your edit of it, or reject "
      "it with a reason the LLM reads in its next prompt for that parent.</p>",
      questions.size());
  for (const ReviewQuestionRecord& question : questions) {
    // Ids on the boxes let the page keep what was typed across its refreshes.
    html += fmt::format(
        "<div class=\"review-question act\" data-question=\"{0}\"><p><b>{1}</b> for <a href=\"#node-{2}\">node {2}</a> "
        "(run {3}, {4}), asked {5}</p><textarea id=\"review-text-{0}\" class=\"review-text\" data-keep rows=\"16\" "
        "cols=\"100\" spellcheck=\"false\">{6}</textarea><br><button onclick=\"kestrelAnswer(this, 'accept')\">accept"
        "</button> <button onclick=\"kestrelAnswer(this, 'edit')\">accept as edited</button> <input "
        "id=\"review-reason-{0}\" class=\"review-reason\" data-keep size=\"40\" placeholder=\"why not (the LLM reads "
        "it)\"><button onclick=\"kestrelAnswer(this, 'reject')\">reject</button> <span class=\"act-said muted\">"
        "</span></div>",
        question.id, Escape(question.purpose), question.parent_id, question.run_id, Escape(question.mutation),
        report::Timestamp(question.created_at), Escape(question.text));
  }
  return html + "</section>";
}

}  // namespace kestrel::serve
