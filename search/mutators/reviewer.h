#pragma once
// Reviewer: a person between the LLM and the graph (`kestrel run --review`).
// Each LLM proposal (the code of a mutate, fix or combine reply) and each
// plan waits for a verdict: accept it, replace it with an edited version, or
// reject it with a reason, which the next prompt for that parent quotes.
// The terminal answers (cli/terminal_reviewer.h); the live page can answer
// through the same interface.
//
// Thread-safety: Review may be called from several mutate stages at once;
// an implementation serializes what it must (one question at a time).

#include <cstdint>
#include <string>

namespace kestrel {

struct ReviewRequest {
  std::int64_t parent = 0;
  std::string purpose;   // "mutate", "fix", "combine" (code) or "plan" (text)
  std::string mutation;  // how the child would be labelled, e.g. "llm:model:unroll"
  std::string text;      // the proposed code, or the plan
};

struct ReviewVerdict {
  enum class Kind { kAccept, kEdit, kReject };
  Kind kind = Kind::kAccept;
  std::string text;    // kEdit: the edited version; kReject: the reason
  std::string author;  // who decided
};

class Reviewer {
 public:
  virtual ~Reviewer() = default;
  // Blocks until a person decides. `cancelled` true (the run stops): an
  // implementation may return a rejection at once.
  virtual ReviewVerdict Review(const ReviewRequest& request) = 0;
};

}  // namespace kestrel
