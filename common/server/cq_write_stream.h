// CqWriteStreamMethod: a server-streaming method (one request, a stream of
// responses) on gRPC's asynchronous API, its events on the loop of
// completion_queue_loop.h. It accepts the method's calls for ever, parses
// each request itself (raw bytes, as cq_unary.h does: a request that does
// not parse is answered INVALID_ARGUMENT naming its type), and hands the
// stream to a producer as a ResponseStream (response_stream.h), telling it
// what becomes of the stream.
//
// Ownership: each stream owns itself from its accept until its finish and
// its done notice are back; then it tells the producer OnDone() and is
// deleted. The method (its functions) must outlive the loop.
// Thread safety: the start function and the producer's events run on the
// loop's thread; the producer may write and finish from any thread, until
// the loop's queue is shut down.
#ifndef FENCEGATE_COMMON_SERVER_CQ_WRITE_STREAM_H_
#define FENCEGATE_COMMON_SERVER_CQ_WRITE_STREAM_H_

#include <functional>
#include <utility>

#include "common/grpc/byte_buffers.h"
#include "common/server/completion_queue_loop.h"
#include "common/server/cq_unary.h"
#include "common/server/malformed_request_interceptor.h"
#include "common/server/response_stream.h"
#include "grpcpp/completion_queue.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/async_stream.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/proto_buffer_reader.h"

namespace fencegate {

template <typename Request, typename Response>
class CqWriteStreamMethod final : public CqAcceptor {
 public:
  using Writer = grpc::ServerAsyncWriter<grpc::ByteBuffer>;
  // Asks gRPC for the method's next stream (the generated raw
  // Request<Method>(context, request, writer, cq, cq, tag)).
  using RequestFn = std::function<void(grpc::ServerContext*, grpc::ByteBuffer*, Writer*,
                                       grpc::ServerCompletionQueue*, void* tag)>;
  // Starts one stream: returns its producer, or null if it finished the
  // stream at once (a refusal). `context` lives until the producer's
  // OnDone().
  using StartFn = std::function<ResponseStreamEvents*(
      grpc::ServerContext& context, const Request& request, ResponseStream<Response>*)>;

  CqWriteStreamMethod(grpc::ServerCompletionQueue* cq, RequestFn request, StartFn start)
      : cq_(cq), request_(std::move(request)), start_(std::move(start)) {}

  void Accept() override { new Stream(this); }

 private:
  class Stream final : public ResponseStream<Response> {
   public:
    explicit Stream(CqWriteStreamMethod* method) : method_(method), writer_(&context_) {
      context_.AsyncNotifyWhenDone(&done_);
      method_->request_(&context_, &in_, &writer_, method_->cq_, &accepted_);
    }

    void StartWrite(const Response* message) override {
      out_ = ByteBufferOf(message->SerializeAsString());
      writer_.Write(out_, &written_);
    }
    void Finish(const grpc::Status& status) override {
      writer_.Finish(status, &finished_);
    }

   private:
    enum Kind { kAccepted, kWritten, kFinished, kDone };
    using Event = OperationEvent<Stream, Kind>;
    friend Event;

    void On(Kind kind, bool ok) {
      switch (kind) {
        case kAccepted: {
          // Not accepted: the queue shuts down. No done notice comes then.
          if (!ok) {
            delete this;
            return;
          }
          pending_ = 2;  // the finish, the done notice
          method_->Accept();
          Request request;
          if (!grpc::SerializationTraits<Request>::Deserialize(&in_, &request).ok()) {
            Finish(MalformedRequestStatus(Request::descriptor()->full_name()));
            return;
          }
          events_ = method_->start_(context_, request, this);
          return;
        }
        case kWritten:
          out_.Clear();
          if (events_ != nullptr) events_->OnWriteDone(ok);
          return;
        case kFinished:
          break;
        case kDone:
          // Before the finish only if cancelled; IsCancelled() may be
          // asked only once this notice is back.
          if (context_.IsCancelled() && events_ != nullptr) events_->OnCancel();
          break;
      }
      if (--pending_ > 0) return;
      if (events_ != nullptr) events_->OnDone();
      delete this;
    }

    CqWriteStreamMethod* const method_;
    grpc::ServerContext context_;
    grpc::ByteBuffer in_;
    grpc::ByteBuffer out_;  // the message being written
    Writer writer_;
    ResponseStreamEvents* events_ = nullptr;
    int pending_ = 0;
    Event accepted_{kAccepted, this};
    Event written_{kWritten, this};
    Event finished_{kFinished, this};
    Event done_{kDone, this};
  };

  grpc::ServerCompletionQueue* const cq_;
  const RequestFn request_;
  const StartFn start_;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_CQ_WRITE_STREAM_H_
