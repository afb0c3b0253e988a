// GatewayServiceImpl: fencegate.v1.Gateway over gRPC's callback API. It only
// translates: proto in, FencedStore call, proto out, and refuses requests
// with fields it does not know. A fenced call holds no thread while it waits
// for its group commit: its reactor is finished from the store's callback.
// The Session stream is a Session (session.h) in a StreamReactor
// (common/server/stream_reactor.h), on raw bytes.
//
// Ownership: `store` and the authorizer must outlive the service. The FencedStore args
// point into the request message, which gRPC keeps alive until Finish(). Thread safety:
// gRPC calls it from many threads; all state is in the store and the sessions.
#ifndef FENCEGATE_GATEWAY_GATEWAY_SERVICE_H_
#define FENCEGATE_GATEWAY_GATEWAY_SERVICE_H_

#include <cstddef>

#include "absl/time/time.h"
#include "common/authz/authorizer.h"
#include "common/core/stream_session.h"
#include "common/server/stream_reactor.h"
#include "fencegate/v1/gateway.grpc.pb.h"
#include "gateway/fenced_store.h"

namespace fencegate::gateway {

// Every method on the callback API; Session on raw bytes.
using GatewayCallbackService = fencegate::v1::Gateway::WithCallbackMethod_Write<
    fencegate::v1::Gateway::WithCallbackMethod_MultiWrite<
        fencegate::v1::Gateway::WithCallbackMethod_Read<
            fencegate::v1::Gateway::WithCallbackMethod_Fence<
                fencegate::v1::Gateway::WithCallbackMethod_List<
                    fencegate::v1::Gateway::WithCallbackMethod_Describe<
                        fencegate::v1::Gateway::WithRawCallbackMethod_Session<
                            fencegate::v1::Gateway::Service>>>>>>>;

class GatewayServiceImpl final : public GatewayCallbackService {
 public:
  // At most `max_sessions` Session streams at once (--max_sessions): one
  // more ends at once with RESOURCE_EXHAUSTED (common/server/stream_reactor.h).
  // Every call, unary or on a Session stream, is first checked against
  // `authorizer` (--policy; null: none) for the client certificate's
  // subject (gateway_call_authz.h): PERMISSION_DENIED, and nothing done,
  // when the policy does not grant it.
  GatewayServiceImpl(FencedStore* store, const StreamLimits& session_limits,
                     size_t max_sessions, const authz::Authorizer* authorizer = nullptr)
      : store_(store),
        authorizer_(authorizer),
        session_limits_(session_limits),
        sessions_(max_sessions) {}

  // Ends every Session stream (now and later) with UNAVAILABLE once it has
  // answered the requests it read, and waits until all have ended or
  // `deadline` passed. Returns how many were live when it began. Call
  // before shutting the server down: StreamRegistry::AwaitEnded() says why
  // the wait.
  size_t CloseSessions(absl::Time deadline);

  grpc::ServerUnaryReactor* Write(grpc::CallbackServerContext* context,
                                  const fencegate::v1::WriteRequest* request,
                                  fencegate::v1::WriteResponse* response) override;
  grpc::ServerUnaryReactor* MultiWrite(
      grpc::CallbackServerContext* context,
      const fencegate::v1::MultiWriteRequest* request,
      fencegate::v1::MultiWriteResponse* response) override;
  grpc::ServerUnaryReactor* Read(grpc::CallbackServerContext* context,
                                 const fencegate::v1::ReadRequest* request,
                                 fencegate::v1::ReadResponse* response) override;
  grpc::ServerUnaryReactor* Fence(grpc::CallbackServerContext* context,
                                  const fencegate::v1::FenceRequest* request,
                                  fencegate::v1::FenceResponse* response) override;
  grpc::ServerUnaryReactor* List(grpc::CallbackServerContext* context,
                                 const fencegate::v1::ListRequest* request,
                                 fencegate::v1::ListResponse* response) override;
  grpc::ServerUnaryReactor* Describe(
      grpc::CallbackServerContext* context,
      const fencegate::v1::DescribeResourceRequest* request,
      fencegate::v1::DescribeResourceResponse* response) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* Session(
      grpc::CallbackServerContext* context) override;

 private:
  // True once it finished `reactor` with PERMISSION_DENIED: the policy does
  // not let the caller make this call.
  template <typename Request>
  bool Refused(grpc::CallbackServerContext* context, const Request& request,
               grpc::ServerUnaryReactor* reactor) const;

  FencedStore* const store_;
  const authz::Authorizer* const authorizer_;  // null: no policy
  const StreamLimits session_limits_;
  StreamRegistry sessions_;
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_GATEWAY_SERVICE_H_
