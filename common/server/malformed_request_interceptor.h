// MalformedRequestInterceptorFactory: a server interceptor that answers a
// request whose bytes do not parse as its method's protobuf message with
// INVALID_ARGUMENT saying so. Without it, gRPC 1.51's callback API answers
// UNIMPLEMENTED with an empty message (grpcpp/impl/codegen/
// server_callback_handlers.h), which reads as "no such method" and tells the
// caller nothing (docs/errors.md). StartGrpcServer() installs it on every
// fencegate server.
//
// How it knows: for a unary or server-streaming method gRPC parses the one
// request before the handler runs; when that fails it gives interceptors a
// null message at POST_RECV_MESSAGE and never calls the handler. The
// interceptor then replaces the status the call sends. Nothing else is
// touched: other calls pass through; client and bidi streams (where a null
// message only means the client's stream ended) get no interceptor; an
// unknown method stays UNIMPLEMENTED.
//
// Thread safety: gRPC creates one interceptor per call and drives it.
#ifndef FENCEGATE_COMMON_SERVER_MALFORMED_REQUEST_INTERCEPTOR_H_
#define FENCEGATE_COMMON_SERVER_MALFORMED_REQUEST_INTERCEPTOR_H_

#include <string>

#include "grpcpp/support/server_interceptor.h"
#include "grpcpp/support/status.h"

namespace fencegate {

// The status for a request that is not a valid `type` (a protobuf message's
// full name): INVALID_ARGUMENT saying so. Also what a raw method that parses
// its own requests answers (cq_unary.h).
grpc::Status MalformedRequestStatus(const std::string& type);

class MalformedRequestInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_MALFORMED_REQUEST_INTERCEPTOR_H_
