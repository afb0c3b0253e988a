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
// Ownership: a call owns itself from its accept to its answer's event.
// The method (its functions) must outlive the loop.
// Thread safety: handlers run on the loop's thread and must not block;
// UnaryReply::Finish may be called on any thread, once.
#ifndef FENCEGATE_COMMON_SERVER_CQ_UNARY_H_
#define FENCEGATE_COMMON_SERVER_CQ_UNARY_H_

#include <functional>
#include <utility>

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

  CqUnaryMethod(grpc::ServerCompletionQueue* cq, RequestFn request, HandleFn handle)
      : cq_(cq), request_(std::move(request)), handle_(std::move(handle)) {}

  void Accept() override { new Call(this); }

 private:
  class Call final : public CompletionQueueEvent, public UnaryReply {
   public:
    explicit Call(CqUnaryMethod* method) : method_(method), responder_(&context_) {
      method_->request_(&context_, &in_, &responder_, method_->cq_, this);
    }

    void On(bool ok) override {
      if (!ok || answered_) {  // the queue shuts down, or the answer is out
        delete this;
        return;
      }
      method_->Accept();
      if (!grpc::SerializationTraits<Request>::Deserialize(&in_, &request_).ok()) {
        answered_ = true;
        responder_.FinishWithError(
            MalformedRequestStatus(Request::descriptor()->full_name()), this);
        return;
      }
      method_->handle_(context_, request_, &response_, this);
    }

    void Finish(const absl::Status& status) override {
      answered_ = true;
      bool own = false;
      if (status.ok() &&
          grpc::SerializationTraits<Response>::Serialize(response_, &out_, &own).ok()) {
        responder_.Finish(out_, grpc::Status::OK, this);
      } else {
        responder_.FinishWithError(
            ToGrpcStatus(status.ok() ? absl::InternalError("cannot encode the response")
                                     : status),
            this);
      }
    }

   private:
    CqUnaryMethod* const method_;
    grpc::ServerContext context_;
    grpc::ByteBuffer in_;
    grpc::ByteBuffer out_;
    Request request_;
    Response response_;
    Responder responder_;
    // Set before the answer's operation starts, read on its event: gRPC's
    // queue orders the two.
    bool answered_ = false;
  };

  grpc::ServerCompletionQueue* const cq_;
  const RequestFn request_;
  const HandleFn handle_;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_CQ_UNARY_H_
