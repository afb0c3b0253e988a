// Session: one gateway Session stream (gateway.proto, rpc Session), without
// gRPC: a StreamSession (common/core/stream_session.h: reading, bounds, answer
// coalescing, the end of the stream) whose calls are Write, MultiWrite,
// Read and Fence, each handed to the FencedStore. Over gRPC it runs on a
// CqStream (common/server/cq_stream.h); the tests and the fuzz target
// drive it on a fake transport. docs/gateway.md, "The session stream", is
// the user's view.
//
// Requests. Calls are handled in the order sent, each as its unary call
// would be (same validation, limits, codes and ErrorDetail), and each gets
// exactly one answer carrying its request_id: its response or its status.
// A refused call fails alone; the stream stays open. Fenced calls (writes,
// fenced reads, fences) join the store's group commit with every other
// stream's and unary call's, in the order sent, so two fenced calls of one
// stream on one resource take effect in the order sent. Plain reads are
// answered from committed state as soon as they are handled. Answers go out
// as they are decided, in any order.
//
// A message whose framing does not parse, or that carries more calls than
// --max_stream_in_flight, ends the stream (stream_session.h, "The end").
// A cancelled or broken stream's calls already handed to the store still
// commit (or not); their answers are dropped.
//
// Ownership: as StreamSession; every call in the store holds a reference.
// `store` and `authorizer` must outlive the session. Thread safety: as StreamSession.
#ifndef FENCEGATE_GATEWAY_SESSION_H_
#define FENCEGATE_GATEWAY_SESSION_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/authz/authorizer.h"
#include "common/core/stream_session.h"
#include "common/core/stream_transport.h"
#include "gateway/fenced_store.h"
#include "gateway/session_wire.h"

namespace fencegate::gateway {

class Session final : public StreamSession {
 public:
  // A session on `transport`, reading its first message. Each call is
  // first checked against `authorizer` (null: no policy;
  // gateway_call_authz.h) for `subject`, the client certificate's.
  static Session* Start(FencedStore* store, const StreamLimits& limits,
                        StreamTransport* transport,
                        const authz::Authorizer* authorizer = nullptr,
                        std::string subject = "");

 private:
  // One call handed to the store, kept in its message's arena.
  struct PendingCall {
    Session* session;
    IncomingMessage* message;
    uint64_t request_id;
    CallKind kind;
    int multi_count;
  };

  Session(FencedStore* store, const StreamLimits& limits, StreamTransport* transport,
          const authz::Authorizer* authorizer, std::string subject)
      : StreamSession(limits, transport),
        store_(store),
        authorizer_(authorizer),
        subject_(std::move(subject)) {}
  ~Session() override = default;

  absl::Status HandleMessage(absl::string_view bytes) override;
  void AppendError(uint64_t request_id, const absl::Status& status,
                   std::string* out) override;

  // Admits and hands one call to the store, or answers it at once.
  void Dispatch(IncomingMessage* message, const IncomingCall& in);

  FencedStore* const store_;
  const authz::Authorizer* const authorizer_;  // null: no policy
  const std::string subject_;
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_SESSION_H_
