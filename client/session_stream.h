// SessionStream: the client's side of a server's Session stream, the
// gateway's (gateway.proto) or the lock service's (lock.proto): one
// bidirectional stream that a client's calls share, each a call with a
// request_id chosen here and one result back, so many calls from many
// threads are in flight on one stream (the gateway commits them in its
// group commits; the lock service parks a waiting Acquire without holding
// up the rest). docs/gateway.md, "The Session stream"; docs/semantics.md,
// "The session stream"; docs/design.md, "The client's threads".
//
// It runs on gRPC's callback API: no thread of its own, and a call never
// blocks its caller. Send() puts the call in the stream's outbox and, if no
// write is under way, starts one; the calls that arrive while a write is
// under way go out together in the next message (at most
// kMaxCallsPerMessage calls, about kMaxBytesPerMessage bytes), so a busy
// stream sends few messages. Answers are dispatched in the read callback.
//
// The stream is opened by the first call and again by the first call after
// it ended. When it ends (the server restarts or fails over, the
// connection breaks), every call still waiting for its answer fails with
// UNAVAILABLE: whether it was applied is unknown, exactly as for a unary
// call that failed with UNAVAILABLE, and the clients retry it the same way
// (client_options.h). A call's own error (stale token, lost lease, invalid
// field) fails that call alone, with the status and ErrorDetail its unary
// call would have returned; the stream stays open.
//
// What else a message brings (the lock service's pushed LeaseLost) goes to
// Hooks::on_message, after the message's answers; Hooks::on_end hears that
// a stream ended, after its calls were failed and before the next stream
// opens.
//
// Bounds: at most `max_in_flight` calls wait for their answers at once
// (keep it at or below the server's --max_stream_in_flight, 256 by
// default, past which the server refuses calls with RESOURCE_EXHAUSTED).
// A call past it waits in the client's queue, in order, for a place; one
// still waiting at its deadline fails DEADLINE_EXCEEDED, unsent. The queue
// holds at most kQueuedPerPlace calls per place in flight: a call past
// that fails at once with RESOURCE_EXHAUSTED.
//
// Order: calls are sent in the order Send() took them; the server decides
// them in the order it reads them. Answers come in the order the server
// decided them.
//
// Thread safety: thread-safe. `done` and the hooks run on gRPC's callback
// threads, or `done` on the calling thread when Send() fails the call at
// once (closing, queue full). They must not block: they may call Send()
// (a closed loop may run inside its callbacks), but not SendAndWait(), and
// must not destroy the session. Each `done` runs exactly once. The
// destructor fails every call not yet answered with CANCELLED, and returns
// after every callback has returned.
#ifndef FENCEGATE_CLIENT_SESSION_STREAM_H_
#define FENCEGATE_CLIENT_SESSION_STREAM_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/base/errors.h"
#include "common/grpc/grpc_status.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/client_callback.h"

namespace fencegate::client {

// `Stub` is a generated service stub with a `Session` bidi-streaming
// method from `Request` (repeated `calls`) to `Response` (repeated
// `results`, each with `request_id` and a oneof with an `error` case).
template <typename Stub, typename Request, typename Response>
class SessionStream {
 public:
  using Call = std::decay_t<decltype(*std::declval<Request&>().add_calls())>;
  using Result = std::decay_t<decltype(*std::declval<Response&>().add_results())>;
  using Done = absl::AnyInvocable<void(absl::StatusOr<Result>)>;

  // One message carries at most this many calls, and past about this many
  // bytes no further call (a larger call goes alone): well within the
  // servers' 4 MiB limit on a message.
  static constexpr int kMaxCallsPerMessage = 64;
  static constexpr size_t kMaxBytesPerMessage = size_t{1} << 20;
  // Calls that may wait in the queue, per place in flight.
  static constexpr size_t kQueuedPerPlace = 64;

  struct Hooks {
    // Each message, after its answers were delivered: what else it says.
    absl::AnyInvocable<void(Response&)> on_message;
    // Once per stream, after it ended and its waiting calls were failed.
    absl::AnyInvocable<void()> on_end;
  };

  // `stub` is not owned and must outlive the session. `name` says whose
  // stream it is in errors ("the gateway's Session stream").
  SessionStream(Stub* stub, size_t max_in_flight, std::string name, Hooks hooks = {})
      : stub_(stub),
        max_in_flight_(max_in_flight == 0 ? 1 : max_in_flight),
        max_queued_(max_in_flight_ * kQueuedPerPlace),
        name_(std::move(name)),
        hooks_(std::move(hooks)) {}
  ~SessionStream();
  SessionStream(const SessionStream&) = delete;
  SessionStream& operator=(const SessionStream&) = delete;

  // Sends `call` (its request_id is set here) and runs `done` once, with
  // its result or why there is none: DEADLINE_EXCEEDED if it waited in the
  // queue past `deadline` (wall clock, as gRPC's), RESOURCE_EXHAUSTED if
  // the queue is full, UNAVAILABLE if the stream ended before the answer,
  // CANCELLED if the session is destroyed first. Never blocks.
  void Send(Call call, absl::Time deadline, Done done);

  // Send() and waits for its result until `deadline`: DEADLINE_EXCEEDED
  // past it (the call may still be applied; its answer is then dropped).
  absl::StatusOr<Result> SendAndWait(Call call, absl::Time deadline);

 private:
  class Stream;
  struct Queued {
    Call call;
    absl::Time deadline;
    Done done;
  };
  // What to do once mu_ is released: gRPC may run a reaction inline in the
  // thread that starts an operation, and every reaction takes mu_.
  struct After {
    Stream* start = nullptr;  // a new stream: its first read, and the call
    Stream* write = nullptr;  // a stream whose out_ is ready to write
    std::vector<std::pair<Done, absl::Status>> fail;
    void Run();
  };

  // The stream new calls go on, opening one if there is none; null while
  // the current one is ending (calls then wait in the queue for the next).
  Stream* Writable(After& after) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Gives `call` its id and its place on `stream`, and starts a write if
  // none is under way.
  void Place(Stream& stream, Call call, Done done, After& after)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves queued calls into the places in flight that are free.
  void Pump(After& after) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Fills the message of the write Place() started, if any: last, before
  // mu_ is released, so that it carries every call placed meanwhile.
  void Seal(After& after) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves what fits in one message from the stream's outbox into its out_.
  void FillOut(Stream& stream) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The stream's reactions: a write or a read completed (not ok: the
  // stream ends), and its end: its calls failed, on_end, then the next
  // stream.
  void WriteDone(Stream& stream, bool ok);
  void ReadDone(Stream& stream, bool ok);
  void Ended(Stream& stream, const grpc::Status& status);

  // What a stream carries: the calls sent and not yet answered, the calls
  // not yet in a message, whether a write is under way, and whether the
  // stream is ending (then no call is added). Guarded by mu_: reached only
  // through CallsOf, which says so to the lock annotations.
  //
  // Writes are started from any thread, not only from the stream's
  // reactions, so the stream holds gRPC back from OnDone (AddHold) until
  // it is ending and no write decided under mu_ is still to be started
  // (`pinned`): then, once, `held` goes and the hold is removed.
  struct StreamCalls {
    absl::flat_hash_map<uint64_t, Done> waiting;
    std::deque<Call> outbox;
    bool writing = false;
    bool ending = false;
    int pinned = 0;
    bool held = true;
  };
  StreamCalls& CallsOf(Stream& stream) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Marks the stream ending; true if the caller must now remove its hold.
  bool EndingLocked(Stream& stream) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After::Run started the write it was pinned for.
  void Unpin(Stream& stream);

  Stub* const stub_;
  const size_t max_in_flight_;
  const size_t max_queued_;
  const std::string name_;
  Hooks hooks_;

  absl::Mutex mu_;
  // Every stream opened and not yet reaped; current_ is one of them.
  std::vector<std::unique_ptr<Stream>> streams_ ABSL_GUARDED_BY(mu_);
  Stream* current_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::deque<Queued> queued_ ABSL_GUARDED_BY(mu_);
  size_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
};

// One Session stream: the reactor gRPC calls back. Owned by the session's
// streams_; never deleted before `finished_` is notified, the last thing
// its OnDone does.
template <typename Stub, typename Request, typename Response>
class SessionStream<Stub, Request, Response>::Stream final
    : public grpc::ClientBidiReactor<Request, Response> {
 public:
  explicit Stream(SessionStream* session) : session_(session) {}

  void OnReadDone(bool ok) override { session_->ReadDone(*this, ok); }
  void OnWriteDone(bool ok) override { session_->WriteDone(*this, ok); }
  void OnDone(const grpc::Status& status) override {
    session_->Ended(*this, status);
    finished_.Notify();  // after this, the session may delete the stream
  }

 private:
  friend class SessionStream;

  SessionStream* const session_;
  grpc::ClientContext context_;
  Response in_;  // the read under way
  Request out_;  // the write under way, from FillOut to WriteDone
  absl::Notification finished_;
  StreamCalls calls_;  // only through SessionStream::CallsOf, under mu_
};

template <typename Stub, typename Request, typename Response>
auto SessionStream<Stub, Request, Response>::CallsOf(Stream& stream) -> StreamCalls& {
  return stream.calls_;
}

template <typename Stub, typename Request, typename Response>
void SessionStream<Stub, Request, Response>::After::Run() {
  if (write != nullptr) {
    write->StartWrite(&write->out_);
    write->session_->Unpin(*write);
  }
  if (start != nullptr) {
    start->StartRead(&start->in_);
    start->StartCall();
  }
  for (auto& [done, status] : fail) done(std::move(status));
}

template <typename Stub, typename Request, typename Response>
SessionStream<Stub, Request, Response>::~SessionStream() {
  std::deque<Queued> queued;
  Stream* current;
  std::vector<Stream*> streams;
  {
    absl::MutexLock lock(&mu_);
    closing_ = true;  // from here on no stream opens and nothing is queued
    queued.swap(queued_);
    current = current_;
    for (auto& stream : streams_) streams.push_back(stream.get());
  }
  const absl::Status cancelled = absl::CancelledError(absl::StrCat(
      "the client was destroyed before the call on ", name_, " was answered"));
  for (Queued& q : queued) q.done(cancelled);
  // Its OnDone fails the calls it carries with CANCELLED.
  if (current != nullptr) current->context_.TryCancel();
  for (Stream* stream : streams) stream->finished_.WaitForNotification();
}

template <typename Stub, typename Request, typename Response>
auto SessionStream<Stub, Request, Response>::Writable(After& after) -> Stream* {
  if (current_ != nullptr) return CallsOf(*current_).ending ? nullptr : current_;
  // Streams that finished go before the next one comes.
  streams_.erase(std::remove_if(streams_.begin(), streams_.end(),
                                [](const std::unique_ptr<Stream>& stream) {
                                  return stream->finished_.HasBeenNotified();
                                }),
                 streams_.end());
  auto stream = std::make_unique<Stream>(this);
  stub_->async()->Session(&stream->context_, stream.get());
  stream->AddHold();  // StreamCalls::held
  current_ = stream.get();
  streams_.push_back(std::move(stream));
  after.start = current_;
  return current_;
}

template <typename Stub, typename Request, typename Response>
void SessionStream<Stub, Request, Response>::Place(Stream& stream, Call call, Done done,
                                                   After& after) {
  ++in_flight_;
  const uint64_t id = next_id_++;
  call.set_request_id(id);
  StreamCalls& calls = CallsOf(stream);
  calls.waiting.emplace(id, std::move(done));
  calls.outbox.push_back(std::move(call));
  if (calls.writing) return;  // its completion sends this call
  // This call starts a write; Seal() fills it once every call placed under
  // this hold of mu_ is in the outbox.
  calls.writing = true;
  ++calls.pinned;
  after.write = &stream;
}

template <typename Stub, typename Request, typename Response>
void SessionStream<Stub, Request, Response>::Seal(After& after) {
  if (after.write != nullptr && after.write->out_.calls_size() == 0)
    FillOut(*after.write);
}

template <typename Stub, typename Request, typename Response>
void SessionStream<Stub, Request, Response>::Pump(After& after) {
  if (queued_.empty()) return;
  const absl::Time now = absl::Now();
  while (!closing_ && !queued_.empty() && in_flight_ < max_in_flight_) {
    Stream* stream = Writable(after);
    if (stream == nullptr) return;
    Queued q = std::move(queued_.front());
    queued_.pop_front();
    if (now >= q.deadline) {
      after.fail.emplace_back(std::move(q.done),
                              absl::DeadlineExceededError(absl::StrCat(
                                  "no place on ", name_, " before the call's deadline (",
                                  max_in_flight_, " calls in flight); it was not sent")));
      continue;
    }
    Place(*stream, std::move(q.call), std::move(q.done), after);
  }
}

template <typename Stub, typename Request, typename Response>
void SessionStream<Stub, Request, Response>::Send(Call call, absl::Time deadline,
                                                  Done done) {
  After after;
  {
    absl::MutexLock lock(&mu_);
    Stream* stream = nullptr;
    if (closing_) {
      after.fail.emplace_back(std::move(done),
                              absl::CancelledError(absl::StrCat(
                                  "the client is being destroyed; not sent on ", name_)));
    } else if (queued_.empty() && in_flight_ < max_in_flight_ &&
               (stream = Writable(after)) != nullptr) {
      Place(*stream, std::move(call), std::move(done), after);
    } else if (queued_.size() < max_queued_) {
      queued_.push_back(Queued{std::move(call), deadline, std::move(done)});
    } else {
      after.fail.emplace_back(
          std::move(done),
          absl::ResourceExhaustedError(absl::StrCat(
              "too many calls waiting for ", name_, ": ", max_in_flight_,
              " in flight and ", max_queued_, " queued (the limit); not sent")));
    }
    Seal(after);
  }
  after.Run();
}

template <typename Stub, typename Request, typename Response>
auto SessionStream<Stub, Request, Response>::SendAndWait(Call call, absl::Time deadline)
    -> absl::StatusOr<Result> {
  struct Answer {
    absl::Notification done;
    absl::StatusOr<Result> result;
  };
  auto answer = std::make_shared<Answer>();
  Send(std::move(call), deadline, [answer](absl::StatusOr<Result> result) {
    answer->result = std::move(result);
    answer->done.Notify();
  });
  if (!answer->done.WaitForNotificationWithDeadline(deadline)) {
    return absl::DeadlineExceededError(absl::StrCat(
        "no answer on ", name_, " within the deadline; the call may still be applied"));
  }
  return std::move(answer->result);
}

template <typename Stub, typename Request, typename Response>
void SessionStream<Stub, Request, Response>::FillOut(Stream& stream) {
  std::deque<Call>& outbox = CallsOf(stream).outbox;
  Request& out = stream.out_;
  size_t bytes = 0;
  while (!outbox.empty() && out.calls_size() < kMaxCallsPerMessage) {
    const size_t size = outbox.front().ByteSizeLong();
    if (out.calls_size() > 0 && bytes + size > kMaxBytesPerMessage) break;
    bytes += size;
    *out.add_calls() = std::move(outbox.front());
    outbox.pop_front();
  }
}

template <typename Stub, typename Request, typename Response>
void SessionStream<Stub, Request, Response>::WriteDone(Stream& stream, bool ok) {
  After after;
  bool release = false;
  {
    absl::MutexLock lock(&mu_);
    StreamCalls& calls = CallsOf(stream);
    stream.out_.Clear();
    calls.writing = false;
    // Not ok: the stream is ending; Ended fails what it carries.
    if (ok && !calls.outbox.empty()) {
      FillOut(stream);
      calls.writing = true;
      ++calls.pinned;
      after.write = &stream;
    }
    if (!ok) release = EndingLocked(stream);
  }
  after.Run();
  if (release) stream.RemoveHold();
}

template <typename Stub, typename Request, typename Response>
bool SessionStream<Stub, Request, Response>::EndingLocked(Stream& stream) {
  StreamCalls& calls = CallsOf(stream);
  calls.ending = true;
  if (!calls.held || calls.pinned > 0) return false;
  calls.held = false;
  return true;
}

template <typename Stub, typename Request, typename Response>
void SessionStream<Stub, Request, Response>::Unpin(Stream& stream) {
  bool release = false;
  {
    absl::MutexLock lock(&mu_);
    StreamCalls& calls = CallsOf(stream);
    --calls.pinned;
    if (calls.ending && calls.pinned == 0 && calls.held) {
      calls.held = false;
      release = true;
    }
  }
  if (release) stream.RemoveHold();
}

template <typename Stub, typename Request, typename Response>
void SessionStream<Stub, Request, Response>::ReadDone(Stream& stream, bool ok) {
  if (!ok) {  // the stream is ending: Ended follows, once the hold is gone
    bool release;
    {
      absl::MutexLock lock(&mu_);
      release = EndingLocked(stream);
    }
    if (release) stream.RemoveHold();
    return;
  }
  std::vector<std::pair<Done, absl::StatusOr<Result>>> answered;
  After after;
  {
    absl::MutexLock lock(&mu_);
    auto& waiting = CallsOf(stream).waiting;
    for (Result& result : *stream.in_.mutable_results()) {
      auto it = waiting.find(result.request_id());
      if (it == waiting.end()) continue;  // not ours to answer
      Done done = std::move(it->second);
      waiting.erase(it);
      --in_flight_;
      if (result.result_case() == Result::kError) {
        answered.emplace_back(std::move(done), FromRpcStatus(result.error()));
      } else {
        answered.emplace_back(std::move(done), std::move(result));
      }
    }
    Pump(after);
    Seal(after);
  }
  after.Run();
  for (auto& [done, result] : answered) done(std::move(result));
  if (hooks_.on_message) hooks_.on_message(stream.in_);
  stream.StartRead(&stream.in_);
}

template <typename Stub, typename Request, typename Response>
void SessionStream<Stub, Request, Response>::Ended(Stream& stream,
                                                   const grpc::Status& status) {
  std::vector<Done> failed;
  bool closing;
  {
    absl::MutexLock lock(&mu_);
    StreamCalls& calls = CallsOf(stream);
    calls.ending = true;
    for (auto& [id, done] : calls.waiting) failed.push_back(std::move(done));
    in_flight_ -= calls.waiting.size();
    calls.waiting.clear();
    calls.outbox.clear();
    closing = closing_;
  }
  const absl::Status finished = FromGrpcStatus(status);
  const absl::Status lost =
      closing
          ? absl::CancelledError(
                absl::StrCat("the client was destroyed before the call on ", name_,
                             " was answered; it may or may not have been applied"))
          : absl::UnavailableError(absl::StrCat(
                name_,
                " ended before the answer; the call may or may not have been applied (",
                finished.ok() ? "it finished" : finished.ToString(), ")"));
  for (Done& done : failed) done(lost);
  if (hooks_.on_end) hooks_.on_end();
  After after;
  {
    absl::MutexLock lock(&mu_);
    if (current_ == &stream) current_ = nullptr;
    Pump(after);  // the calls that waited for the next stream
    Seal(after);
  }
  after.Run();
}

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_SESSION_STREAM_H_
