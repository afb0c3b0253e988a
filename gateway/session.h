// Session: one gateway Session stream (gateway.proto, rpc Session), without
// gRPC: it takes the client's messages as bytes, hands each request to the
// FencedStore, and sends the answers back through a SessionTransport (the
// gRPC reactor in session_reactor.h; a fake one in the tests and the fuzz
// target). docs/gateway.md, "The session stream", is the user's view.
//
// Requests. Each message carries one or more calls, each with a
// request_id the client picks. Calls are handled in the order sent, each as
// its unary call would be (same validation, limits, codes and ErrorDetail),
// and each gets exactly one answer carrying its request_id: its response or
// its status. A refused call fails alone; the stream stays open. Fenced
// calls (writes, fenced reads, fences) join the store's group commit with
// every other stream's and unary call's, in the order sent, so two fenced
// calls of one stream on one resource take effect in the order sent. Plain
// reads are answered from committed state as soon as they are handled.
// Answers go out as they are decided, in any order.
//
// Bounds (limits.max_in_flight, --max_stream_in_flight):
//   - calls admitted and not yet answered: at most max_in_flight; a call
//     past it is refused with RESOURCE_EXHAUSTED and changes nothing;
//   - answers not yet taken by the transport: while there are
//     max_in_flight or more, the session stops reading (gRPC's flow control
//     then holds the client back), so a client that sends and never reads
//     cannot grow the server's memory;
//   - one message may carry at most max_in_flight calls; a larger one ends
//     the stream (RESOURCE_EXHAUSTED), as one beyond gRPC's size limit does.
// A call whose request_id is one of the stream's calls still in flight is
// refused (INVALID_ARGUMENT, field "request_id"); the first one stands.
//
// The end. After the client half-closes, every call in flight is answered,
// then the stream finishes OK. A message whose calls cannot be told apart
// (its framing does not parse), a message with too many calls, or Close()
// (the server shutting down) stop the reading: the calls already read are
// answered, and the stream finishes with that status; nothing read after is
// applied. A cancelled or broken stream finishes at once; its calls already
// handed to the store still commit (or not) and their answers are dropped.
//
// Answers are coalesced: those decided together (one group commit, one
// incoming message) go out in one message (ReplyBatch), and while a message
// is being written, new answers queue for the next one.
//
// Ownership and lifetime: reference counted. Start() returns a session
// holding one reference for the transport, which Detach() drops once the
// transport is done; every call in the store holds another. The session is
// deleted with its last reference. `store` must outlive it.
//
// Thread safety: the transport's events may come on any thread, but at most
// one OnMessage() or OnReadsDone() at a time and one OnWriteDone() per
// StartWrite(). Answers arrive on the store's threads. Everything else is
// guarded by mu_. The transport is called with mu_ held, so its methods
// must not call back into the session synchronously.
#ifndef FENCEGATE_GATEWAY_SESSION_H_
#define FENCEGATE_GATEWAY_SESSION_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "gateway/fenced_store.h"
#include "gateway/reply_batch.h"
#include "gateway/session_wire.h"

namespace fencegate::gateway {

struct SessionLimits {
  // See the header; --max_stream_in_flight.
  size_t max_in_flight = 256;
  // Answers queued for one outgoing message are cut once they reach this
  // many bytes (one larger answer goes alone). Keeps each message well
  // below a client's receive limit (gRPC's default is 4 MiB).
  size_t max_message_bytes = 256 << 10;
};

// What a session needs from its stream.
class SessionTransport {
 public:
  virtual ~SessionTransport() = default;
  // Asks for the next message: OnMessage() or OnReadsDone() follows, once.
  virtual void StartRead() = 0;
  // Sends one message: OnWriteDone() follows, once. One at a time.
  virtual void StartWrite(std::string bytes) = 0;
  // Ends the stream. Called once, never while a write is in progress;
  // neither StartRead() nor StartWrite() follows.
  virtual void Finish(const absl::Status& status) = 0;
};

class Session final : public Flushable {
 public:
  // A session on `transport`, reading its first message.
  static Session* Start(FencedStore* store, const SessionLimits& limits,
                        SessionTransport* transport);

  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

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
  // called on it. Drops the transport's reference.
  void Detach();

  // Ends the stream from the server's side (shutdown): stops reading,
  // answers the calls already read, then finishes with `status`.
  // Idempotent; the first status wins.
  void Close(const absl::Status& status);

  // Flushable (reply_batch.h).
  void Ref() override { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() override;
  void FlushReplies() override;

 private:
  // One call handed to the store, kept in its message's arena.
  struct PendingCall {
    Session* session;
    IncomingMessage* message;
    uint64_t request_id;
    CallKind kind;
    int multi_count;
  };

  Session(FencedStore* store, const SessionLimits& limits, SessionTransport* transport)
      : store_(store), limits_(limits), transport_(transport) {}
  ~Session() = default;

  // Admits and hands one call to the store, or answers it at once.
  void Dispatch(IncomingMessage* message, const IncomingCall& in);
  // The store's answer to `call`, already encoded by `encode`.
  template <typename Encode>
  void Complete(const PendingCall& call, Encode encode);
  // Queues an answer that needs no store (a refusal before admission).
  void AnswerNowLocked(uint64_t request_id, const absl::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After an answer was queued: flush now, or when the thread's
  // ReplyBatch closes.
  void AfterAnswerLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Where the next answer goes (cuts the open message when it is full).
  std::string* OutboxLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  void FlushLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartWriteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ResumeReadingLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MaybeFinishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CloseLocked(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  FencedStore* const store_;
  const SessionLimits limits_;
  std::atomic<int> refs_{1};  // the transport's

  absl::Mutex mu_;
  SessionTransport* transport_ ABSL_GUARDED_BY(mu_);  // null once detached
  // request_ids admitted and not yet answered.
  absl::flat_hash_set<uint64_t> in_flight_ ABSL_GUARDED_BY(mu_);
  // Answers not yet written: whole messages waiting, then the open one.
  std::deque<std::pair<std::string, size_t>> full_ ABSL_GUARDED_BY(mu_);
  std::string outbox_ ABSL_GUARDED_BY(mu_);
  size_t outbox_count_ ABSL_GUARDED_BY(mu_) = 0;
  // Answers decided and not yet taken by the transport (queued + writing).
  size_t unsent_ ABSL_GUARDED_BY(mu_) = 0;
  size_t writing_count_ ABSL_GUARDED_BY(mu_) = 0;  // answers in the write in progress
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

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_SESSION_H_
