// StreamSession: the server's side of one bidirectional stream that carries
// many calls, each with a request_id the client picks and one answer each,
// without gRPC: the gateway's Session (gateway/session.h) and the lock
// service's (lockservice/core/lock_session.h). It owns what both have in
// common: reading one message at a time, the bounds on calls in flight and on
// unsent answers, coalescing answers into messages, and the end of the
// stream. A derived class parses each message and dispatches its calls
// (HandleMessage); each call it admits (Admit) it answers exactly once
// (Complete). It may also send messages of its own (Push): the lock
// service's pushed lease losses.
//
// Bounds (limits.max_in_flight, --max_stream_in_flight):
//   - calls admitted and not yet answered: at most max_in_flight; a call
//     past it is refused with RESOURCE_EXHAUSTED and changes nothing;
//   - answers and pushes not yet taken by the transport: while there are
//     max_in_flight or more, the session stops reading (gRPC's flow control
//     then holds the client back), so a client that sends and never reads
//     cannot grow the server's memory;
//   - one message may carry at most max_in_flight calls (TooManyCalls()).
// A call whose request_id is one of the stream's calls still in flight is
// refused (INVALID_ARGUMENT, field "request_id"); the first one stands.
//
// Outgoing messages. Answers and pushes decided together (on one thread
// while a ReplyBatch is open: one group commit, one incoming message) go
// out in one message, and while a message is being written, new ones queue
// for the next. A message is cut once it reaches limits.max_message_bytes
// (one larger answer goes alone), and before an answer that would follow a
// push: within one message, every answer was decided before every push.
//
// The end. After the client half-closes, every call in flight is answered,
// then the stream finishes OK. HandleMessage() refusing a whole message,
// or Close() (the server shutting down), stop the reading: the calls
// already admitted are answered, and the stream finishes with that status;
// nothing read after is handled. A cancelled or broken stream finishes at
// once (CANCELLED); its answers and pushes from then on are dropped.
//
// Ownership and lifetime: reference counted. A derived class's Start()
// returns a session holding one reference for the transport, which
// Detach() drops once the transport is done; whoever may still call
// Complete() or Push() later (a call in a store, a lease in a manager)
// holds another. The session is deleted with its last reference, on the
// thread that drops it.
//
// Run to completion. A derived class whose calls join a group commit
// (common/core/group_commit.h) holds one of its Arrivals while it handles a
// message and hands it to AfterMessage(), which ends it with FlushHere()
// once the message's other answers are out and the next message is asked
// for: the commit the message completes runs on the thread that read it,
// and so do its answers' writes.
//
// Thread safety: the transport's events may come on any thread, but at most
// one OnMessage() or OnReadsDone() at a time and one OnWriteDone() per
// StartWrite(). Complete() and Push() may come on any thread. The state is
// guarded by mu_, which is held while the transport is called and never
// while HandleMessage() or another hook of the derived class runs.
#ifndef FENCEGATE_COMMON_CORE_STREAM_SESSION_H_
#define FENCEGATE_COMMON_CORE_STREAM_SESSION_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/core/reply_batch.h"
#include "common/core/stream_transport.h"

namespace fencegate {

struct StreamLimits {
  // See the header; --max_stream_in_flight.
  size_t max_in_flight = 256;
  // Outgoing messages are cut once they reach this many bytes (one larger
  // answer goes alone). Keeps each message well below a client's receive
  // limit (gRPC's default is 4 MiB).
  size_t max_message_bytes = 256 << 10;
};

class StreamSession : public Flushable {
 public:
  StreamSession(const StreamSession&) = delete;
  StreamSession& operator=(const StreamSession&) = delete;

  // ---------------------------------------------------- transport events
  // A message arrived (after StartRead()); `bytes` need only live for the
  // call.
  void OnMessage(absl::string_view bytes);
  // No message will come: the client half-closed, or the stream ended.
  void OnReadsDone();
  void OnWriteDone(bool ok);
  // The client cancelled, or the connection broke.
  void OnCancel();
  // The transport is done (after Finish() completed): nothing more is
  // called on it. Runs OnDetached(), then drops the transport's reference.
  void Detach();

  // Ends the stream from the server's side (shutdown): stops reading,
  // answers the calls already admitted, then finishes with `status`.
  // Idempotent; the first status wins.
  void Close(const absl::Status& status);

  // Flushable (reply_batch.h).
  void Ref() override { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() override;
  void FlushReplies() override;

 protected:
  StreamSession(const StreamLimits& limits, StreamTransport* transport)
      : limits_(limits), transport_(transport) {}
  virtual ~StreamSession() = default;

  // Asks for the first message. A derived class's Start() calls it once,
  // last.
  void StartReading();

  // ------------------------------------------- the derived class's part
  // Handles one message: admits its calls and hands each to whatever
  // answers it. An error refuses the message as a whole (its calls cannot
  // be told apart, or there are too many): nothing of it was handled, the
  // reading stops and the stream ends with that status once the calls in
  // flight are answered. Called on the transport's thread, one at a time,
  // inside a ReplyBatch.
  virtual absl::Status HandleMessage(absl::string_view bytes) = 0;
  // Appends the answer to `request_id` that is `status` alone (a refusal)
  // to an outgoing message. REQUIRES: !status.ok().
  virtual void AppendError(uint64_t request_id, const absl::Status& status,
                           std::string* out) = 0;
  // After OnCancel() marked the stream cancelled.
  virtual void OnCancelled() {}
  // In Detach(), while the transport's reference is still held.
  virtual void OnDetached() {}

  // -------------------------------------------------- for HandleMessage
  // Admits the call `request_id`, which parsed with `error` (OK if it
  // did). True: the call is in flight, and Complete() must answer it once.
  // False: it was answered already (refused: `error`, its id is in use,
  // the stream is full), or the stream is cancelled and it must not be
  // applied; either way the caller does nothing more with it.
  bool Admit(uint64_t request_id, const absl::Status& error);
  // The answer to an admitted call: `encode` appends it to an outgoing
  // message (it runs under the session's lock; it must not block).
  void Complete(uint64_t request_id, absl::FunctionRef<void(std::string*)> encode);
  // A message element the server sends on its own (no call answered by
  // it): `encode` appends it, as for Complete().
  void Push(absl::FunctionRef<void(std::string*)> encode);
  // Whether the stream was cancelled or broke.
  bool cancelled();
  // `then` runs once HandleMessage() has returned, the answers it decided
  // went out (its ReplyBatch closed) and the next message was asked for, on
  // this thread with no lock held: where a session ends its group commit's
  // Arrival with FlushHere() (see the header). Once per message at most;
  // `then` must not block on anything but storage.
  void AfterMessage(absl::AnyInvocable<void() &&> then) {
    after_message_ = std::move(then);
  }
  // RESOURCE_EXHAUSTED if one message carries more calls than
  // limits.max_in_flight, else OK.
  absl::Status CheckCallCount(size_t calls) const;
  const StreamLimits& limits() const { return limits_; }

 private:
  enum class Element { kAnswer, kPush };

  // Where the next element goes (cuts the open message when it is full, or
  // when an answer would follow a push).
  std::string* OutboxLocked(Element element) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void QueuedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FlushLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartWriteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ResumeReadingLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MaybeFinishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CloseLocked(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const StreamLimits limits_;
  std::atomic<int> refs_{1};  // the transport's
  // AfterMessage()'s work for the message being handled. Only the thread
  // handling a message touches it (one at a time), and moves it out before
  // the next message is asked for.
  absl::AnyInvocable<void() &&> after_message_;

  absl::Mutex mu_;
  StreamTransport* transport_ ABSL_GUARDED_BY(mu_);  // null once detached
  // request_ids admitted and not yet answered.
  absl::flat_hash_set<uint64_t> in_flight_ ABSL_GUARDED_BY(mu_);
  // Elements not yet written: whole messages waiting (bytes, elements),
  // then the open one.
  std::deque<std::pair<std::string, size_t>> full_ ABSL_GUARDED_BY(mu_);
  std::string outbox_ ABSL_GUARDED_BY(mu_);
  size_t outbox_count_ ABSL_GUARDED_BY(mu_) = 0;
  bool outbox_has_push_ ABSL_GUARDED_BY(mu_) = false;
  // Elements queued and not yet taken by the transport (queued + writing).
  size_t unsent_ ABSL_GUARDED_BY(mu_) = 0;
  size_t writing_count_ ABSL_GUARDED_BY(mu_) = 0;  // elements in the write in progress
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  // A read is asked for, or its message is being handled.
  bool reading_ ABSL_GUARDED_BY(mu_) = false;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool deferred_ ABSL_GUARDED_BY(mu_) = false;  // in a ReplyBatch
  // Close(), or a message that ended the stream: no more reading.
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status close_status_ ABSL_GUARDED_BY(mu_);
  // Cancelled, or a write failed: finish without answering.
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_CORE_STREAM_SESSION_H_
