#pragma once
// The command evaluator's answer (docs/COMMAND_PROTOCOL.md): the one JSON
// document a user's run command writes to {answer}, validated field by
// field before anything in it is believed.
//
//   {"protocol": 1, "nonce": "<the {nonce} it was given>",
//    "outcome": "measured" | "wrong" | "crashed" | "timed_out" | "build_failed" | "rejected",
//    "reason": "one line",                       (optional; required unless measured)
//    "log": "text",                              (optional)
//    "shapes": [                                 (measured: every timed shape, in the task's order)
//      {"shape": {"rows": 2048, "cols": 1024},
//       "candidate_s": [seconds per call, one per sample, ...],
//       "reference_s": [...],
//       "max_abs_error": 0.0, "max_rel_error": 0.0}],
//    "profile": {...}}                           (optional, measured only: core/profile.h's
//                                                 JSON, e.g. from ncu; stored as the node's profile)
//
// Unknown fields are violations too: a misspelt field must not be ignored.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/outcome.h"
#include "core/profile.h"
#include "core/task.h"

namespace kestrel {

inline constexpr int kCommandProtocolVersion = 1;

struct CommandShapeAnswer {
  Shape shape;
  std::vector<double> candidate_seconds;  // per call, one per sample
  std::vector<double> reference_seconds;
  double max_abs_error = 0.0;  // over every checked element of the candidate's outputs
  double max_rel_error = 0.0;
};

struct CommandAnswer {
  Outcome outcome = Outcome::kRejected;
  std::string reason;
  std::string log;
  std::vector<CommandShapeAnswer> shapes;  // measured only
  std::optional<Profile> profile;          // measured only, when the harness profiled the kernel
};

// Parses and validates an answer for a task timed on `timed_shapes`, which
// must echo `nonce`, with at least `min_samples` samples per kernel and
// shape (the harness was given {min_samples}). An InvalidArgument error
// names the field and what was expected ("shapes[1].candidate_s[3]: expected
// a positive finite number of seconds, got -1"): the evaluator records it as
// a protocol violation.
Result<CommandAnswer> ParseCommandAnswer(std::string_view text, const std::vector<Shape>& timed_shapes,
                                         std::string_view nonce, int min_samples = 1);

}  // namespace kestrel
