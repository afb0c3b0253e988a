#include "common/core/stream_session.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/errors.h"

namespace fencegate {

void StreamSession::StartReading() {
  absl::MutexLock lock(&mu_);
  ResumeReadingLocked();
}

void StreamSession::Unref() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

// ------------------------------------------------------------- reading

void StreamSession::OnMessage(absl::string_view bytes) {
  // reading_ stays true until the message is handled: nobody may ask for
  // the next message before then (one read at a time, in order).
  {
    absl::MutexLock lock(&mu_);
    // The stream is ending: what arrives now is neither applied nor answered.
    if (closing_ || cancelled_ || finished_) {
      reading_ = false;
      return;
    }
  }
  absl::Status refused;
  {
    // Every answer decided while this message is handled goes out in one
    // message, when the batch closes.
    ReplyBatch replies;
    refused = HandleMessage(bytes);
  }
  absl::AnyInvocable<void()&&> then = std::exchange(after_message_, nullptr);
  {
    absl::MutexLock lock(&mu_);
    reading_ = false;
    if (!refused.ok()) {
      CloseLocked(refused);
    } else {
      ResumeReadingLocked();
    }
  }
  if (then) std::move(then)();
}

void StreamSession::OnReadsDone() {
  absl::MutexLock lock(&mu_);
  reading_ = false;
  reads_done_ = true;
  MaybeFinishLocked();
}

absl::Status StreamSession::CheckCallCount(size_t calls) const {
  if (calls <= limits_.max_in_flight) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "a message on this stream carries ", calls,
      " requests; one message may carry at most ", limits_.max_in_flight,
      " (--max_stream_in_flight). None of them was applied; the stream ends here. Send "
      "fewer requests per message"));
}

bool StreamSession::Admit(uint64_t request_id, const absl::Status& error) {
  absl::MutexLock lock(&mu_);
  if (cancelled_ || finished_) return false;  // nobody will read the answer: not applied
  absl::Status refusal;
  if (in_flight_.contains(request_id)) {
    refusal = InvalidFieldError(
        "request_id", absl::StrCat("request_id ", request_id,
                                   " belongs to a request of this stream still waiting "
                                   "for its answer; ids must be unique among the "
                                   "requests in flight. This request was not applied; "
                                   "the earlier one stands"));
  } else if (!error.ok()) {
    refusal = error;
  } else if (in_flight_.size() >= limits_.max_in_flight) {
    refusal = absl::ResourceExhaustedError(absl::StrCat(
        "this stream has ", in_flight_.size(),
        " requests waiting for their answers, its limit (--max_stream_in_flight); this "
        "request was not applied. Wait for answers before sending more"));
  } else {
    in_flight_.insert(request_id);
    return true;
  }
  AppendError(request_id, refusal, OutboxLocked(Element::kAnswer));
  QueuedLocked();
  return false;
}

bool StreamSession::cancelled() {
  absl::MutexLock lock(&mu_);
  return cancelled_;
}

// ------------------------------------------------------------- answers

void StreamSession::Complete(uint64_t request_id,
                             absl::FunctionRef<void(std::string*)> encode) {
  absl::MutexLock lock(&mu_);
  in_flight_.erase(request_id);
  if (cancelled_ || finished_) {
    MaybeFinishLocked();
    return;
  }
  encode(OutboxLocked(Element::kAnswer));
  QueuedLocked();
}

void StreamSession::Push(absl::FunctionRef<void(std::string*)> encode) {
  absl::MutexLock lock(&mu_);
  if (cancelled_ || finished_) return;
  encode(OutboxLocked(Element::kPush));
  outbox_has_push_ = true;
  QueuedLocked();
}

std::string* StreamSession::OutboxLocked(Element element) {
  if (outbox_.size() >= limits_.max_message_bytes ||
      (element == Element::kAnswer && outbox_has_push_)) {
    full_.emplace_back(std::move(outbox_), outbox_count_);
    outbox_ = std::string();
    outbox_count_ = 0;
    outbox_has_push_ = false;
  }
  return &outbox_;
}

// After an element was appended: flush now, or when the thread's
// ReplyBatch closes.
void StreamSession::QueuedLocked() {
  ++outbox_count_;
  ++unsent_;
  if (ReplyBatch* batch = ReplyBatch::Current()) {
    if (!deferred_) {
      deferred_ = true;
      batch->Defer(this);
    }
    return;
  }
  FlushLocked();
}

void StreamSession::FlushReplies() {
  absl::MutexLock lock(&mu_);
  deferred_ = false;
  FlushLocked();
}

void StreamSession::FlushLocked() {
  StartWriteLocked();
  ResumeReadingLocked();
  MaybeFinishLocked();
}

void StreamSession::StartWriteLocked() {
  if (writing_ || cancelled_ || finished_ || transport_ == nullptr) return;
  std::string bytes;
  size_t count = 0;
  if (!full_.empty()) {
    bytes = std::move(full_.front().first);
    count = full_.front().second;
    full_.pop_front();
  } else if (outbox_count_ > 0) {
    bytes = std::exchange(outbox_, std::string());
    count = std::exchange(outbox_count_, 0);
    outbox_has_push_ = false;
  } else {
    return;
  }
  writing_ = true;
  writing_count_ = count;
  transport_->StartWrite(std::move(bytes));
}

void StreamSession::OnWriteDone(bool ok) {
  absl::MutexLock lock(&mu_);
  writing_ = false;
  unsent_ -= writing_count_;
  writing_count_ = 0;
  if (!ok) cancelled_ = true;  // the client is gone
  FlushLocked();
}

// ------------------------------------------------------- flow and the end

void StreamSession::ResumeReadingLocked() {
  if (reading_ || reads_done_ || closing_ || cancelled_ || finished_ ||
      transport_ == nullptr) {
    return;
  }
  // A client that does not take its answers is not read from.
  if (unsent_ >= limits_.max_in_flight) return;
  reading_ = true;
  transport_->StartRead();
}

void StreamSession::OnCancel() {
  {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    MaybeFinishLocked();
  }
  OnCancelled();
}

void StreamSession::Close(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  CloseLocked(status);
}

void StreamSession::CloseLocked(const absl::Status& status) {
  if (closing_ || finished_) return;
  closing_ = true;
  close_status_ = status;
  MaybeFinishLocked();
}

void StreamSession::MaybeFinishLocked() {
  if (finished_ || writing_ || transport_ == nullptr) return;
  if (cancelled_) {
    finished_ = true;
    transport_->Finish(absl::CancelledError(
        "the stream was cancelled or broke; requests without an answer may or may not "
        "have been applied"));
    return;
  }
  if (!reads_done_ && !closing_) return;
  if (!in_flight_.empty() || unsent_ > 0) return;
  finished_ = true;
  transport_->Finish(closing_ ? close_status_ : absl::OkStatus());
}

void StreamSession::Detach() {
  {
    absl::MutexLock lock(&mu_);
    transport_ = nullptr;
  }
  OnDetached();
  Unref();
}

}  // namespace fencegate
