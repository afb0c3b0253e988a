// GatewaySession: the client's side of the gateway's Session stream
// (docs/gateway.md, "The Session stream"): one bidirectional stream that a
// GatewayClient's calls share, each a GatewayCall with a request_id chosen
// here and one GatewayResult back, so many calls from many threads are in
// flight on one stream and the gateway commits them in its group commits.
//
// The stream is opened by the first call and again by the first call after
// it ended. When it ends (the gateway restarts, the connection breaks),
// every call still waiting for its answer fails with UNAVAILABLE: whether
// it was applied is unknown, exactly as for a unary call that failed with
// UNAVAILABLE, and GatewayClient retries it the same way (client_options.h).
// A call's own error (stale token, version mismatch, bad signature, invalid
// field) fails that call alone, with the status and ErrorDetail its unary
// call would have returned; the stream stays open.
//
// Bounds: at most `max_in_flight` calls wait for their answers at once; a
// call past it waits for a free place (until its deadline). Keep it at or
// below the gateway's --max_stream_in_flight (256 by default), past which
// the gateway refuses calls with RESOURCE_EXHAUSTED.
//
// Order: calls are sent in the order Call() gave them their ids; the gateway
// commits two writes to one resource in the order it read them. Answers
// come in the order the gateway decided them.
//
// Thread safety: thread-safe. `done` callbacks run on the session's reader
// thread, or on the calling thread if the call fails before it is sent;
// they must not block or call back into the session. The destructor ends
// the stream; calls still waiting get UNAVAILABLE.
#ifndef FENCEGATE_CLIENT_GATEWAY_SESSION_H_
#define FENCEGATE_CLIENT_GATEWAY_SESSION_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "fencegate/v1/gateway.grpc.pb.h"

namespace fencegate::client {

class GatewaySession {
 public:
  using Done = absl::AnyInvocable<void(absl::StatusOr<v1::GatewayResult>)>;

  // `stub` is not owned and must outlive the session.
  GatewaySession(v1::Gateway::Stub* stub, size_t max_in_flight);
  ~GatewaySession();
  GatewaySession(const GatewaySession&) = delete;
  GatewaySession& operator=(const GatewaySession&) = delete;

  // Sends `call` (its request_id is set here) and runs `done` once, with
  // its result or why there is none: DEADLINE_EXCEEDED if no place in
  // flight freed up by `deadline` (wall clock, as gRPC's), UNAVAILABLE if
  // no stream could be opened or it ended before the answer.
  void Call(v1::GatewayCall call, absl::Time deadline, Done done);

  // Call() and waits for its result until `deadline`: DEADLINE_EXCEEDED
  // past it (the call may still be applied; its answer is then dropped).
  absl::StatusOr<v1::GatewayResult> CallAndWait(v1::GatewayCall call,
                                                absl::Time deadline);

 private:
  struct Stream;

  // The open stream, opening one if there is none or it ended; null if the
  // stream could not be opened.
  std::shared_ptr<Stream> OpenStream() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The reader thread of `stream`: answers its calls until it ends, then
  // fails the rest.
  void ReadAnswers(Stream* stream);
  // Takes the place of call `id` out of `stream` (null if it was answered
  // or failed already) and frees its place in flight.
  Done Take(Stream& stream, uint64_t id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  v1::Gateway::Stub* const stub_;
  const size_t max_in_flight_;

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

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_GATEWAY_SESSION_H_
