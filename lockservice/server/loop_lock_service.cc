#include "lockservice/server/loop_lock_service.h"

#include <string_view>

#include "common/server/cq_stream.h"
#include "common/server/cq_write_stream.h"

namespace fencegate::lockservice {
namespace {

namespace v1 = ::fencegate::v1;

// The calls that may wait long (parked in a queue) and must learn that
// their client went away: one more event per call, for these only.
constexpr bool WaitsLong(std::string_view method) {
  return method == "Acquire" || method == "Campaign";
}

}  // namespace

void LoopLockService::Serve(grpc::ServerCompletionQueue* cq) {
#define FENCEGATE_LOOP_UNARY_(Method, In, Out)                                         \
  methods_.push_back(std::make_unique<CqUnaryMethod<v1::In, v1::Out>>(                 \
      cq,                                                                              \
      [this](grpc::ServerContext* context, grpc::ByteBuffer* request,                  \
             grpc::ServerAsyncResponseWriter<grpc::ByteBuffer>* responder,             \
             grpc::ServerCompletionQueue* queue, void* tag) {                          \
        service_.Request##Method(context, request, responder, queue, queue, tag);      \
      },                                                                               \
      [this](grpc::ServerContext& context, const v1::In& request, v1::Out* response,   \
             UnaryReply* reply) { calls_.Method(context, request, response, reply); }, \
      WaitsLong(#Method)));
#define FENCEGATE_LOOP_STREAM_(Method, In, Out)                                \
  methods_.push_back(std::make_unique<CqWriteStreamMethod<v1::In, v1::Out>>(   \
      cq,                                                                      \
      [this](grpc::ServerContext* context, grpc::ByteBuffer* request,          \
             grpc::ServerAsyncWriter<grpc::ByteBuffer>* writer,                \
             grpc::ServerCompletionQueue* queue, void* tag) {                  \
        service_.Request##Method(context, request, writer, queue, queue, tag); \
      },                                                                       \
      [this](grpc::ServerContext& context, const v1::In& request,              \
             ResponseStream<v1::Out>* stream) {                                \
        return calls_.Method(context, request, stream);                        \
      }));
  FENCEGATE_LOCK_SERVICE_UNARY_METHODS(FENCEGATE_LOOP_UNARY_)
  FENCEGATE_LOCK_SERVICE_WRITE_METHODS(FENCEGATE_LOOP_STREAM_)
#undef FENCEGATE_LOOP_UNARY_
#undef FENCEGATE_LOOP_STREAM_
  methods_.push_back(std::make_unique<CqStreamAcceptor>(
      cq,
      [this](grpc::ServerContext* context, RawServerStream* stream,
             grpc::ServerCompletionQueue* queue,
             void* tag) { service_.RequestSession(context, stream, queue, queue, tag); },
      [this](grpc::ServerContext& context, StreamTransport* transport) {
        return calls_.Session(context, transport);
      },
      calls_.sessions()));
  for (auto& method : methods_) method->Accept();
}

}  // namespace fencegate::lockservice
