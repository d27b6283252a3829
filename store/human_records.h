#pragma once
// Plain rows of what people did to a search graph (the human_actions table,
// docs/SCHEMA.md): notes, labels, standing instructions, bans, pins, added
// candidates and the review mode's verdicts. Store methods in store_human.cc.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kestrel {

// A label replaces the node's previous one; unban / unpin / unsteer undo the
// ban, the pin, or every standing instruction of the run so far.
enum class HumanActionKind {
  kNote,
  kLabel,
  kSteer,
  kUnsteer,
  kBan,
  kUnban,
  kPin,
  kUnpin,
  kAdd,
  kReviewAccept,
  kReviewEdit,
  kReviewReject,
};

std::string_view ToString(HumanActionKind kind);
std::optional<HumanActionKind> ParseHumanActionKind(std::string_view text);

// The words `kestrel label` takes, in the order help prints them.
inline constexpr std::string_view kLabelWords[] = {"clean", "reward_hack", "suspicious", "wrong", "interesting"};
bool IsLabelWord(std::string_view word);

struct HumanActionRecord {
  std::int64_t id = 0;
  std::int64_t graph_id = 0;
  std::int64_t node_id = 0;  // 0: none (a steer)
  std::int64_t run_id = 0;   // 0: none (a note, a label, a ban outside a run)
  HumanActionKind kind = HumanActionKind::kNote;
  std::string text;    // the note, the label word, the instruction, a reason
  std::string author;  // $USER unless --as NAME
  std::int64_t created_at = 0;
};

// When a result awaits a person's review (run config "review"): its speedup
// jumped past `speedup` times the best measured before it, or its roofline
// fraction exceeds `roofline`.
struct ReviewThresholds {
  double speedup = 5.0;
  double roofline = 0.8;
};

// A measured node awaiting review: no label yet.
struct ReviewItem {
  std::int64_t node_id = 0;
  double speedup = 0.0;
  double previous_best = 0.0;      // the best speedup measured before it (0: it was the first)
  double roofline_fraction = 0.0;  // the highest of its measured results
  std::string reason;              // "12.0x the previous best 2.0x", "roofline 91%"
};

// A question of the review mode (review_questions, schema v8): one LLM
// proposal or plan waiting for a person at the terminal or on the live page.
enum class ReviewState { kOpen, kAccepted, kEdited, kRejected, kWithdrawn };
std::string_view ToString(ReviewState state);
std::optional<ReviewState> ParseReviewState(std::string_view text);

struct ReviewQuestionRecord {
  std::int64_t id = 0;
  std::int64_t graph_id = 0;
  std::int64_t run_id = 0;
  std::int64_t parent_id = 0;  // the node the proposal would be a child of
  std::string purpose;         // "mutate", "fix", "combine" or "plan"
  std::string mutation;        // how the child would be labelled
  std::string text;            // the proposed code, or the plan
  ReviewState state = ReviewState::kOpen;
  std::string answer;  // kEdited: the edited version; kRejected / kWithdrawn: the reason
  std::string author;  // who answered ("" while open)
  std::int64_t created_at = 0;
  std::int64_t answered_at = 0;  // 0 while open
};

}  // namespace kestrel
