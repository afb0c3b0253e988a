// Unary methods on gRPC's asynchronous API, their events on the loop of
// completion_queue_loop.h: CqUnaryMethod accepts one method's calls for
// ever, hands each to a handler, and sends the answer the handler gives,
// from whatever thread gives it (a store's commit, or the loop itself).
//
// The method is registered raw (the generated WithRawMethod_<Method>) and
// parses its request itself: a request whose bytes do not parse is
// answered INVALID_ARGUMENT naming its type, as on the callback API
// (malformed_request_interceptor.h), where gRPC's asynchronous API would
// cancel it with INTERNAL "Unable to parse request".
//
// Ownership: a call owns itself from its accept until its answer's event
// (and its done notice, if it watches for cancellation) is back. The
// method (its functions) must outlive the loop.
// Thread safety: handlers run on the loop's thread and must not block;
// UnaryReply::Finish may be called on any thread, once; OnCancelled from
// the handler, and `cancel` runs on the loop's thread.
#ifndef FENCEGATE_COMMON_SERVER_CQ_UNARY_H_
#define FENCEGATE_COMMON_SERVER_CQ_UNARY_H_

#include <functional>
#include <utility>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "common/grpc/grpc_status.h"
#include "common/server/completion_queue_loop.h"
#include "common/server/malformed_request_interceptor.h"
#include "grpcpp/completion_queue.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/async_unary_call.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "grpcpp/support/proto_buffer_writer.h"

namespace fencegate {

// What accepts one method's calls on a completion queue (a unary method
// here, a stream's in cq_stream.h), so a server can hold its methods in
// one list.
class CqAcceptor {
 public:
  virtual ~CqAcceptor() = default;
  // Posts one accept. Call once before the loop runs; each accepted call
  // posts the next.
  virtual void Accept() = 0;
};

// Where a handler sends its call's answer: the response it was handed
// (when `status` is OK) or `status` alone. Once per call, on any thread.
class UnaryReply {
 public:
  virtual void Finish(const absl::Status& status) = 0;
  // For a call that may wait long (a parked Acquire): runs `cancel` once if
  // the client cancels the call before its answer is sent (at once, if it
  // already has), and never otherwise. At most once per call, from the
  // handler before it returns. On a method that does not watch for
  // cancellation (CqUnaryMethod's `notify_cancel`), `cancel` never runs.
  virtual void OnCancelled(absl::AnyInvocable<void() &&> cancel) = 0;

 protected:
  ~UnaryReply() = default;
};

template <typename Request, typename Response>
class CqUnaryMethod final : public CqAcceptor {
 public:
  using Responder = grpc::ServerAsyncResponseWriter<grpc::ByteBuffer>;
  // Asks gRPC for the method's next call (the generated raw
  // Request<Method>(context, request, responder, cq, cq, tag)).
  using RequestFn =
      std::function<void(grpc::ServerContext*, grpc::ByteBuffer*, Responder*,
                         grpc::ServerCompletionQueue*, void* tag)>;
  // Handles one call: fills `response` and calls reply->Finish() once, now
  // or later. `request`, `response` and `context` live until then.
  using HandleFn =
      std::function<void(grpc::ServerContext& context, const Request& request,
                         Response* response, UnaryReply* reply)>;

  // With `notify_cancel`, each call also watches for its client's
  // cancellation (one more event per call) for UnaryReply::OnCancelled.
  CqUnaryMethod(grpc::ServerCompletionQueue* cq, RequestFn request, HandleFn handle,
                bool notify_cancel = false)
      : cq_(cq),
        request_(std::move(request)),
        handle_(std::move(handle)),
        notify_cancel_(notify_cancel) {}

  void Accept() override { new Call(this); }

 private:
  // One call. Its events: the accept, then the answer's and (with
  // notify_cancel) the done notice's, in either order; the last one back
  // deletes it. All on the loop's thread.
  class Call final : public UnaryReply {
   public:
    explicit Call(CqUnaryMethod* method) : method_(method), responder_(&context_) {
      if (method_->notify_cancel_) context_.AsyncNotifyWhenDone(&done_);
      method_->request_(&context_, &in_, &responder_, method_->cq_, &accepted_);
    }

    void Finish(const absl::Status& status) override {
      bool own = false;
      if (status.ok() &&
          grpc::SerializationTraits<Response>::Serialize(response_, &out_, &own).ok()) {
        responder_.Finish(out_, grpc::Status::OK, &answered_);
      } else {
        responder_.FinishWithError(
            ToGrpcStatus(status.ok() ? absl::InternalError("cannot encode the response")
                                     : status),
            &answered_);
      }
    }

    void OnCancelled(absl::AnyInvocable<void() &&> cancel) override {
      if (cancelled_) {
        std::move(cancel)();
      } else {
        cancel_ = std::move(cancel);
      }
    }

   private:
    enum Kind { kAccepted, kAnswered, kDone };
    using Event = OperationEvent<Call, Kind>;
    friend Event;

    void On(Kind kind, bool ok) {
      switch (kind) {
        case kAccepted:
          // Not accepted: the queue shuts down. No done notice comes then.
          if (!ok) {
            delete this;
            return;
          }
          pending_ = method_->notify_cancel_ ? 2 : 1;  // the answer, the done notice
          method_->Accept();
          if (!grpc::SerializationTraits<Request>::Deserialize(&in_, &request_).ok()) {
            responder_.FinishWithError(
                MalformedRequestStatus(Request::descriptor()->full_name()), &answered_);
            return;
          }
          method_->handle_(context_, request_, &response_, this);
          return;
        case kAnswered:
          break;
        case kDone:
          // IsCancelled() may be asked only once this notice is back.
          if (context_.IsCancelled()) {
            cancelled_ = true;
            if (cancel_ != nullptr) std::move(cancel_)();
          }
          cancel_ = nullptr;
          break;
      }
      if (--pending_ == 0) delete this;
    }

    CqUnaryMethod* const method_;
    grpc::ServerContext context_;
    grpc::ByteBuffer in_;
    grpc::ByteBuffer out_;
    Request request_;
    Response response_;
    Responder responder_;
    int pending_ = 0;  // events still to come back, once accepted
    bool cancelled_ = false;
    absl::AnyInvocable<void() &&> cancel_;
    Event accepted_{kAccepted, this};
    Event answered_{kAnswered, this};
    Event done_{kDone, this};
  };

  grpc::ServerCompletionQueue* const cq_;
  const RequestFn request_;
  const HandleFn handle_;
  const bool notify_cancel_;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_CQ_UNARY_H_
