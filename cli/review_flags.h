#pragma once
// The review mode's flags, shared by `kestrel run` and `kestrel resume`:
//   --review        each LLM proposal and plan waits for a person, asked on
//                   the terminal and shown on the live page (kestrel serve
//                   --token T) at once; the first answer wins
//   --review-page   the same, answered on the live page only: for a run
//                   without a terminal (e.g. under nohup or tmux detached)
//   --as NAME       who answers at the terminal (default $USER)

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "core/error.h"

namespace kestrel {
class Reviewer;
}

namespace kestrel::cli {

struct ReviewFlags {
  bool terminal = false;  // --review
  bool page = false;      // --review-page
  std::string author;
  bool any() const { return terminal || page; }
};

void AddReviewFlags(CLI::App& command, ReviewFlags& flags);
// The run's reviewer: null without either flag. --review without a terminal
// on stdin is InvalidArgument (it would wait for ever for nobody).
Result<std::shared_ptr<Reviewer>> MakeReviewer(const ReviewFlags& flags);

}  // namespace kestrel::cli
