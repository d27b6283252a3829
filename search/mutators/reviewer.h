#pragma once
// Reviewer: a person between the LLM and the graph (`kestrel run --review`).
// Each LLM proposal (the code of a mutate, fix or combine reply) and each
// plan waits for a verdict: accept it, replace it with an edited version, or
// reject it with a reason, which the next prompt for that parent quotes.
// The terminal answers (cli/terminal_reviewer.h); the review desk
// (search/review_desk.h) posts each question to the database as well, where
// the live page answers it (`kestrel serve`): the first answer wins.
//
// Thread-safety: Review may be called from several mutate stages at once;
// an implementation serializes what it must (one question at a time).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace kestrel {

struct ReviewRequest {
  std::int64_t parent = 0;
  std::string purpose;   // "mutate", "fix", "combine" (code) or "plan" (text)
  std::string mutation;  // how the child would be labelled, e.g. "llm:model:unroll"
  std::string text;      // the proposed code, or the plan
  // Asked while the question is open: true once the run is stopping (a
  // signal, a spent budget) or the question was answered elsewhere; the
  // reviewer then stops waiting. Empty: never.
  std::function<bool()> cancelled{};
  bool Cancelled() const { return cancelled && cancelled(); }
};

struct ReviewVerdict {
  // kWithdrawn: nobody answered before the run stopped; the proposal is
  // dropped and no person's action is recorded.
  enum class Kind { kAccept, kEdit, kReject, kWithdrawn };
  Kind kind = Kind::kAccept;
  std::string text;    // kEdit: the edited version; kReject, kWithdrawn: the reason
  std::string author;  // who decided
};

class Reviewer {
 public:
  virtual ~Reviewer() = default;
  // Blocks until a person decides, or until request.Cancelled() (then
  // kWithdrawn, unless a person's answer came first).
  virtual ReviewVerdict Review(const ReviewRequest& request) = 0;
  // The run the questions are about, once its row exists and before the
  // first question: a reviewer that records its questions needs it.
  virtual void Attach(const std::filesystem::path& db, std::int64_t run_id) {
    (void)db;
    (void)run_id;
  }
};

}  // namespace kestrel
