#include "lockservice/server/lock_service.h"

#include "common/server/callback_response_stream.h"
#include "common/server/callback_unary_reply.h"
#include "common/server/stream_reactor.h"

namespace fencegate::lockservice {

namespace v1 = ::fencegate::v1;

#define FENCEGATE_CALLBACK_UNARY_(Method, Request, Response)                             \
  grpc::ServerUnaryReactor* LockServiceImpl::Method(                                     \
      grpc::CallbackServerContext* context, const v1::Request* request,                  \
      v1::Response* response) {                                                          \
    return CallbackUnaryReply::Run(                                                      \
        [&](UnaryReply* reply) { calls_.Method(*context, *request, response, reply); }); \
  }
#define FENCEGATE_CALLBACK_STREAM_(Method, Request, Response)             \
  grpc::ServerWriteReactor<v1::Response>* LockServiceImpl::Method(        \
      grpc::CallbackServerContext* context, const v1::Request* request) { \
    auto* stream = new CallbackResponseStream<v1::Response>();            \
    stream->Bind(calls_.Method(*context, *request, stream));              \
    return stream;                                                        \
  }
FENCEGATE_LOCK_SERVICE_UNARY_METHODS(FENCEGATE_CALLBACK_UNARY_)
FENCEGATE_LOCK_SERVICE_WRITE_METHODS(FENCEGATE_CALLBACK_STREAM_)
#undef FENCEGATE_CALLBACK_UNARY_
#undef FENCEGATE_CALLBACK_STREAM_

RawStreamReactor* LockServiceImpl::Session(grpc::CallbackServerContext* context) {
  return new StreamReactor(
      [&](StreamTransport* transport) { return calls_.Session(*context, transport); },
      calls_.sessions());
}

}  // namespace fencegate::lockservice
