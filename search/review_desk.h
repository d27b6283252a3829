#pragma once
// The review desk: `kestrel run --review` with the database in the loop.
// Each question (an LLM proposal or plan) is opened as a review_questions
// row (store_review.cc), where the live page (`kestrel serve`) shows it with
// accept, edit and reject buttons; the terminal, when there is one, asks at
// the same time. The first answer wins: the terminal's is written with the
// same conditional update the page uses, and a terminal question is closed
// as soon as the page answered. A question still open when the run stops
// (a signal, a spent budget) is withdrawn.

#include <memory>

namespace kestrel {

class Reviewer;

// `terminal`: null when only the page answers (a run without a terminal).
// The questions are recorded once Attach names the run; before that (or
// when the database cannot be written) only the terminal is asked.
std::shared_ptr<Reviewer> MakeReviewDesk(std::shared_ptr<Reviewer> terminal);

}  // namespace kestrel
