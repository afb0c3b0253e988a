#include "gateway/session.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "gateway/request_protos.h"

namespace fencegate::gateway {
namespace {

namespace v1 = ::fencegate::v1;

bool IsPlainRead(const IncomingCall& in) {
  return in.call != nullptr && in.call->request_case() == v1::GatewayCall::kRead &&
         in.call->read().token() == 0;
}

}  // namespace

Session* Session::Start(FencedStore* store, const SessionLimits& limits,
                        SessionTransport* transport) {
  auto* session = new Session(store, limits, transport);
  absl::MutexLock lock(&session->mu_);
  session->ResumeReadingLocked();
  return session;
}

void Session::Unref() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

// ------------------------------------------------------------- reading

void Session::OnMessage(absl::string_view bytes) {
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
  // Declared first, so it flushes last: every answer decided while this
  // message is handled goes out in one message.
  ReplyBatch replies;
  IncomingMessage* message = IncomingMessage::Parse(bytes).release();
  absl::Status error = message->error();
  if (error.ok() && message->calls().size() > limits_.max_in_flight) {
    error = absl::ResourceExhaustedError(absl::StrCat(
        "a message on this stream carries ", message->calls().size(),
        " requests; one message may carry at most ", limits_.max_in_flight,
        " (--max_stream_in_flight). None of them was applied; the stream ends here. Send "
        "fewer requests per message"));
  }
  if (!error.ok()) {
    message->Unref();
    absl::MutexLock lock(&mu_);
    reading_ = false;
    CloseLocked(error);
    return;
  }
  // Fenced calls first, while the store's writer waits for them to arrive
  // (group_commit.h); plain reads, which read storage on this thread, after.
  std::vector<const IncomingCall*> plain_reads;
  {
    std::optional<FencedStore::Arrival> arrival;
    arrival.emplace(store_->Arriving());
    for (const IncomingCall& in : message->calls()) {
      if (in.error.ok() && IsPlainRead(in)) {
        plain_reads.push_back(&in);
      } else {
        Dispatch(message, in);
      }
    }
  }
  for (const IncomingCall* in : plain_reads) Dispatch(message, *in);
  message->Unref();
  absl::MutexLock lock(&mu_);
  reading_ = false;
  ResumeReadingLocked();
}

void Session::OnReadsDone() {
  absl::MutexLock lock(&mu_);
  reading_ = false;
  reads_done_ = true;
  MaybeFinishLocked();
}

void Session::Dispatch(IncomingMessage* message, const IncomingCall& in) {
  const uint64_t id = in.request_id;
  {
    absl::MutexLock lock(&mu_);
    if (cancelled_ || finished_) return;  // nobody will read the answer: not applied
    if (in_flight_.contains(id)) {
      AnswerNowLocked(id, InvalidFieldError(
                              "request_id",
                              absl::StrCat("request_id ", id,
                                           " belongs to a request of this stream still "
                                           "waiting for its answer; ids must be unique "
                                           "among the requests in flight. This request "
                                           "was not applied; the earlier one stands")));
      return;
    }
    if (!in.error.ok()) {
      AnswerNowLocked(id, in.error);
      return;
    }
    if (in_flight_.size() >= limits_.max_in_flight) {
      AnswerNowLocked(id, absl::ResourceExhaustedError(absl::StrCat(
                              "this stream has ", in_flight_.size(),
                              " requests waiting for their answers, its limit "
                              "(--max_stream_in_flight); this request was not applied. "
                              "Wait for answers before sending more")));
      return;
    }
    in_flight_.insert(id);
  }
  const v1::GatewayCall& call = *in.call;
  CallKind kind = CallKind::kFence;
  int multi_count = 0;
  switch (call.request_case()) {
    case v1::GatewayCall::kWrite:
      kind = CallKind::kWrite;
      break;
    case v1::GatewayCall::kMultiWrite:
      kind = CallKind::kMultiWrite;
      multi_count = call.multi_write().mutations_size();
      break;
    case v1::GatewayCall::kRead:
      kind = CallKind::kRead;
      break;
    case v1::GatewayCall::kFence:
    case v1::GatewayCall::REQUEST_NOT_SET:  // refused by the parser
      break;
  }
  auto* pending = google::protobuf::Arena::Create<PendingCall>(
      message->arena(), PendingCall{this, message, id, kind, multi_count});
  message->Ref();
  Ref();
  // Runs once, on the store's writer thread or on this one.
  auto release = [](PendingCall* p) {
    IncomingMessage* m = p->message;  // p lives in m's arena
    Session* s = p->session;
    m->Unref();
    s->Unref();
  };
  switch (kind) {
    case CallKind::kWrite:
    case CallKind::kMultiWrite:
      store_->Write(kind == CallKind::kWrite ? WriteArgsFromProto(call.write())
                                             : MultiWriteArgsFromProto(call.multi_write()),
                    [pending, release](absl::StatusOr<WriteResult> result) {
                      pending->session->Complete(*pending, [&](std::string* out) {
                        AppendWriteResult(pending->request_id, pending->kind,
                                          pending->multi_count, result, out);
                      });
                      release(pending);
                    });
      break;
    case CallKind::kRead:
      store_->Read(ReadArgsFromProto(call.read()),
                   [pending, release](absl::StatusOr<ReadResult> result) {
                     pending->session->Complete(*pending, [&](std::string* out) {
                       AppendReadResult(pending->request_id, std::move(result), out);
                     });
                     release(pending);
                   });
      break;
    case CallKind::kFence:
      store_->Fence(FenceArgsFromProto(call.fence()),
                    [pending, release](absl::StatusOr<FenceResult> result) {
                      pending->session->Complete(*pending, [&](std::string* out) {
                        AppendFenceResult(pending->request_id, result, out);
                      });
                      release(pending);
                    });
      break;
  }
}

// ------------------------------------------------------------- answers

template <typename Encode>
void Session::Complete(const PendingCall& call, Encode encode) {
  absl::MutexLock lock(&mu_);
  in_flight_.erase(call.request_id);
  if (cancelled_ || finished_) {
    MaybeFinishLocked();
    return;
  }
  encode(OutboxLocked());
  ++outbox_count_;
  ++unsent_;
  AfterAnswerLocked();
}

void Session::AnswerNowLocked(uint64_t request_id, const absl::Status& status) {
  AppendError(request_id, status, OutboxLocked());
  ++outbox_count_;
  ++unsent_;
  AfterAnswerLocked();
}

std::string* Session::OutboxLocked() {
  if (outbox_.size() >= limits_.max_message_bytes) {
    full_.emplace_back(std::move(outbox_), outbox_count_);
    outbox_ = std::string();
    outbox_count_ = 0;
  }
  return &outbox_;
}

void Session::AfterAnswerLocked() {
  if (ReplyBatch* batch = ReplyBatch::Current()) {
    if (!deferred_) {
      deferred_ = true;
      batch->Defer(this);
    }
    return;
  }
  FlushLocked();
}

void Session::FlushReplies() {
  absl::MutexLock lock(&mu_);
  deferred_ = false;
  FlushLocked();
}

void Session::FlushLocked() {
  StartWriteLocked();
  ResumeReadingLocked();
  MaybeFinishLocked();
}

void Session::StartWriteLocked() {
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
  } else {
    return;
  }
  writing_ = true;
  writing_count_ = count;
  transport_->StartWrite(std::move(bytes));
}

void Session::OnWriteDone(bool ok) {
  absl::MutexLock lock(&mu_);
  writing_ = false;
  unsent_ -= writing_count_;
  writing_count_ = 0;
  if (!ok) cancelled_ = true;  // the client is gone
  FlushLocked();
}

// ------------------------------------------------------- flow and the end

void Session::ResumeReadingLocked() {
  if (reading_ || reads_done_ || closing_ || cancelled_ || finished_ ||
      transport_ == nullptr) {
    return;
  }
  // A client that does not take its answers is not read from.
  if (unsent_ >= limits_.max_in_flight) return;
  reading_ = true;
  transport_->StartRead();
}

void Session::OnCancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
  MaybeFinishLocked();
}

void Session::Close(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  CloseLocked(status);
}

void Session::CloseLocked(const absl::Status& status) {
  if (closing_ || finished_) return;
  closing_ = true;
  close_status_ = status;
  MaybeFinishLocked();
}

void Session::MaybeFinishLocked() {
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

void Session::Detach() {
  {
    absl::MutexLock lock(&mu_);
    transport_ = nullptr;
  }
  Unref();
}

}  // namespace fencegate::gateway
