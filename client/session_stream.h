// SessionStream: the client's side of a server's Session stream, the
// gateway's (gateway.proto) or the lock service's (lock.proto): one
// bidirectional stream that a client's calls share, each a call with a
// request_id chosen here and one result back, so many calls from many
// threads are in flight on one stream (the gateway commits them in its
// group commits; the lock service parks a waiting Acquire without holding
// up the rest). docs/gateway.md, "The Session stream"; docs/semantics.md,
// "The session stream".
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
// a stream ended, after its calls were failed.
//
// Bounds: at most `max_in_flight` calls wait for their answers at once; a
// call past it waits for a free place (until its deadline). Keep it at or
// below the server's --max_stream_in_flight (256 by default), past which
// the server refuses calls with RESOURCE_EXHAUSTED.
//
// Order: calls are sent in the order Call() gave them their ids; the server
// decides them in the order it reads them. Answers come in the order the
// server decided them.
//
// Thread safety: thread-safe. `done` callbacks and the hooks run on the
// stream's reader thread (or `done` on the calling thread if the call fails
// before it is sent); they must not block or call back into the session.
// The destructor ends the stream; calls still waiting get UNAVAILABLE.
#ifndef FENCEGATE_CLIENT_SESSION_STREAM_H_
#define FENCEGATE_CLIENT_SESSION_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
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
#include "absl/time/time.h"
#include "common/errors.h"
#include "common/grpc_status.h"
#include "grpcpp/client_context.h"

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
        name_(std::move(name)),
        hooks_(std::move(hooks)) {}
  ~SessionStream();
  SessionStream(const SessionStream&) = delete;
  SessionStream& operator=(const SessionStream&) = delete;

  // Sends `call` (its request_id is set here) and runs `done` once, with
  // its result or why there is none: DEADLINE_EXCEEDED if no place in
  // flight freed up by `deadline` (wall clock, as gRPC's), UNAVAILABLE if
  // no stream could be opened or it ended before the answer.
  void Send(Call call, absl::Time deadline, Done done);

  // Send() and waits for its result until `deadline`: DEADLINE_EXCEEDED
  // past it (the call may still be applied; its answer is then dropped).
  absl::StatusOr<Result> SendAndWait(Call call, absl::Time deadline);

 private:
  struct Stream {
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReaderWriter<Request, Response>> rw;
    std::thread reader;
    // Guarded by the session's mu_: the calls sent and not yet answered,
    // and whether the stream has ended (then nothing is added).
    absl::flat_hash_map<uint64_t, Done> waiting;
    bool ended = false;
  };

  // The open stream, opening one if there is none or it ended; null if the
  // stream could not be opened.
  std::shared_ptr<Stream> OpenStream() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The reader thread of `stream`: answers its calls until it ends, then
  // fails the rest.
  void ReadAnswers(Stream* stream);
  // Takes the place of call `id` out of `stream` (null if it was answered
  // or failed already) and frees its place in flight.
  Done Take(Stream& stream, uint64_t id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Stub* const stub_;
  const size_t max_in_flight_;
  const std::string name_;
  Hooks hooks_;  // used by one reader thread at a time

  absl::Mutex mu_;
  std::shared_ptr<Stream> stream_ ABSL_GUARDED_BY(mu_);
  size_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  // Held from giving a call its id to writing it, so calls go out in id
  // order (gRPC allows one write at a time), and by the reader around the
  // stream's Finish(). Taken before mu_, which is released during the
  // write: the reader thread answers calls while a write waits on flow
  // control.
  absl::Mutex write_mu_ ABSL_ACQUIRED_BEFORE(mu_);
};

template <typename Stub, typename Request, typename Response>
SessionStream<Stub, Request, Response>::~SessionStream() {
  std::shared_ptr<Stream> stream;
  {
    absl::MutexLock lock(&mu_);
    closing_ = true;
    stream = std::move(stream_);
  }
  if (stream == nullptr) return;
  stream->context.TryCancel();  // the reader fails the calls still waiting
  stream->reader.join();
}

template <typename Stub, typename Request, typename Response>
auto SessionStream<Stub, Request, Response>::OpenStream() -> std::shared_ptr<Stream> {
  if (stream_ != nullptr && !stream_->ended) return stream_;
  if (stream_ != nullptr) {
    // It ended: its reader has failed its calls (or is running their
    // callbacks or on_end, which never take mu_) and returns.
    stream_->reader.join();
    stream_.reset();
  }
  auto stream = std::make_shared<Stream>();
  stream->rw = stub_->Session(&stream->context);
  if (stream->rw == nullptr) return nullptr;
  stream->reader = std::thread([this, s = stream.get()] { ReadAnswers(s); });
  stream_ = stream;
  return stream;
}

template <typename Stub, typename Request, typename Response>
auto SessionStream<Stub, Request, Response>::Take(Stream& stream, uint64_t id) -> Done {
  auto it = stream.waiting.find(id);
  if (it == stream.waiting.end()) return nullptr;
  Done done = std::move(it->second);
  stream.waiting.erase(it);
  --in_flight_;
  return done;
}

template <typename Stub, typename Request, typename Response>
void SessionStream<Stub, Request, Response>::Send(Call call, absl::Time deadline,
                                                  Done done) {
  absl::Status refused;
  // A place in flight first, reserved while holding only mu_: the reader
  // frees places under mu_ alone, and needs write_mu_ to finish a stream.
  {
    absl::MutexLock lock(&mu_);
    auto has_place = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return closing_ || in_flight_ < max_in_flight_;
    };
    if (mu_.AwaitWithDeadline(absl::Condition(&has_place), deadline)) {
      ++in_flight_;
    } else {
      refused = absl::DeadlineExceededError(
          absl::StrCat("no place on ", name_, " before the call's deadline (",
                       max_in_flight_, " calls in flight)"));
    }
  }
  if (!refused.ok()) {
    done(refused);
    return;
  }
  // Then its id and its write, in one turn of write_mu_: calls go out in
  // the order they got their ids.
  absl::MutexLock in_order(&write_mu_);
  std::shared_ptr<Stream> stream;
  {
    absl::MutexLock lock(&mu_);
    if (closing_) {
      refused = absl::UnavailableError("the client is closing");
    } else if (stream = OpenStream(); stream == nullptr) {
      refused = absl::UnavailableError(absl::StrCat("could not open ", name_));
    } else {
      const uint64_t id = next_id_++;
      call.set_request_id(id);
      stream->waiting.emplace(id, std::move(done));
    }
    if (!refused.ok()) --in_flight_;
  }
  if (!refused.ok()) {
    done(refused);
    return;
  }
  Request message;
  *message.add_calls() = std::move(call);
  // A failed write means the stream ended: its reader fails the call.
  stream->rw->Write(message);
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
void SessionStream<Stub, Request, Response>::ReadAnswers(Stream* stream) {
  Response message;
  std::vector<std::pair<Done, absl::StatusOr<Result>>> answered;
  while (stream->rw->Read(&message)) {
    {
      absl::MutexLock lock(&mu_);
      for (Result& result : *message.mutable_results()) {
        Done done = Take(*stream, result.request_id());
        if (done == nullptr) continue;  // not ours to answer any more
        if (result.result_case() == Result::kError) {
          answered.emplace_back(std::move(done), FromRpcStatus(result.error()));
        } else {
          answered.emplace_back(std::move(done), std::move(result));
        }
      }
    }
    for (auto& [done, result] : answered) done(std::move(result));
    answered.clear();
    if (hooks_.on_message) hooks_.on_message(message);
  }
  absl::Status finished;
  {
    // Not while a Write() is under way: it fails soon, the stream is over.
    absl::MutexLock no_write(&write_mu_);
    finished = FromGrpcStatus(stream->rw->Finish());
  }
  const absl::Status lost = absl::UnavailableError(absl::StrCat(
      name_, " ended before the answer; the call may or may not have been applied (",
      finished.ok() ? "it finished" : finished.ToString(), ")"));
  std::vector<Done> failed;
  {
    absl::MutexLock lock(&mu_);
    stream->ended = true;
    for (auto& [id, done] : stream->waiting) failed.push_back(std::move(done));
    in_flight_ -= stream->waiting.size();
    stream->waiting.clear();
  }
  for (Done& done : failed) done(lost);
  if (hooks_.on_end) hooks_.on_end();
}

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_SESSION_STREAM_H_
