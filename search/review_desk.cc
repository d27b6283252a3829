#include "search/review_desk.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>

#include "core/stop.h"
#include "search/mutators/reviewer.h"
#include "store/store.h"

namespace kestrel {
namespace {

using namespace std::chrono_literals;

// How often an open question's row is read for the page's answer.
constexpr auto kPollEvery = 200ms;

ReviewVerdict VerdictOf(const ReviewQuestionRecord& question) {
  switch (question.state) {
    case ReviewState::kAccepted:
      return {ReviewVerdict::Kind::kAccept, "", question.author};
    case ReviewState::kEdited:
      return {ReviewVerdict::Kind::kEdit, question.answer, question.author};
    default:
      return {ReviewVerdict::Kind::kReject, question.answer, question.author};
  }
}

ReviewState StateOf(ReviewVerdict::Kind kind) {
  switch (kind) {
    case ReviewVerdict::Kind::kAccept:
      return ReviewState::kAccepted;
    case ReviewVerdict::Kind::kEdit:
      return ReviewState::kEdited;
    case ReviewVerdict::Kind::kReject:
      break;
    case ReviewVerdict::Kind::kWithdrawn:
      return ReviewState::kWithdrawn;
  }
  return ReviewState::kRejected;
}

class ReviewDesk final : public Reviewer {
 public:
  explicit ReviewDesk(std::shared_ptr<Reviewer> terminal) : terminal_(std::move(terminal)) {}

  void Attach(const std::filesystem::path& db, std::int64_t run_id) override {
    auto store = Store::Open(db);
    std::lock_guard lock(mutex_);
    if (store) store_ = std::move(*store);
    run_id_ = run_id;
  }

  ReviewVerdict Review(const ReviewRequest& request) override {
    const std::optional<std::int64_t> id = Open(request);
    if (!id) {
      if (terminal_) return terminal_->Review(request);
      return {ReviewVerdict::Kind::kWithdrawn, "the run's database could not record the question", "kestrel"};
    }
    std::optional<ReviewVerdict> page;  // the page's answer, once read
    auto closed = [&] {
      if (request.Cancelled()) return true;
      if (!page) page = Answered(*id);
      return page.has_value();
    };
    if (terminal_) {
      ReviewRequest asked = request;
      asked.cancelled = closed;
      const ReviewVerdict said = terminal_->Review(asked);
      if (page) return *page;
      if (!request.Cancelled() && !StopRequested()) {
        // The terminal answered: record it unless the page was first.
        if (auto first = Answer(*id, StateOf(said.kind), said.text, said.author); first && !*first) {
          if (auto answered = Answered(*id)) return *answered;
        }
        return said;
      }
    } else {
      while (!closed()) std::this_thread::sleep_for(kPollEvery);
      if (page) return *page;
    }
    // The run is stopping: the question goes away unanswered, unless an
    // answer came in the meantime (then it stands, and is used).
    const std::string reason = "the run stopped before a person answered";
    if (auto first = Answer(*id, ReviewState::kWithdrawn, reason, "kestrel"); first && !*first) {
      if (auto answered = Answered(*id)) return *answered;
    }
    return {ReviewVerdict::Kind::kWithdrawn, reason, "kestrel"};
  }

 private:
  // The question's row id; nullopt when it cannot be recorded.
  std::optional<std::int64_t> Open(const ReviewRequest& request) {
    std::lock_guard lock(mutex_);
    if (!store_) return std::nullopt;
    ReviewQuestionRecord question;
    question.run_id = run_id_;
    question.parent_id = request.parent;
    question.purpose = request.purpose;
    question.mutation = request.mutation;
    question.text = request.text;
    auto id = store_->OpenReviewQuestion(question);
    if (!id) return std::nullopt;
    return *id;
  }

  // The answer recorded for question `id` (by the page), if any.
  std::optional<ReviewVerdict> Answered(std::int64_t id) {
    std::lock_guard lock(mutex_);
    auto question = store_->GetReviewQuestion(id);
    if (!question || question->state == ReviewState::kOpen) return std::nullopt;
    if (question->state == ReviewState::kWithdrawn) return std::nullopt;
    return VerdictOf(*question);
  }

  Result<bool> Answer(std::int64_t id, ReviewState state, const std::string& text, const std::string& author) {
    std::lock_guard lock(mutex_);
    return store_->AnswerReviewQuestion(id, state, text, author.empty() ? "kestrel" : author);
  }

  std::shared_ptr<Reviewer> terminal_;
  std::mutex mutex_;  // guards the connection (one statement at a time) and run_id_
  std::unique_ptr<Store> store_;
  std::int64_t run_id_ = 0;
};

}  // namespace

std::shared_ptr<Reviewer> MakeReviewDesk(std::shared_ptr<Reviewer> terminal) {
  return std::make_shared<ReviewDesk>(std::move(terminal));
}

}  // namespace kestrel
