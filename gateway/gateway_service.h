// GatewayServiceImpl: fencegate.v1.Gateway on gRPC's asynchronous API, every
// call's events on the server's completion-queue loop
// (common/server/completion_queue_loop.h). It only translates: proto in,
// FencedStore call, proto out, and refuses requests with fields it does not
// know. A fenced call holds no thread while it waits for its group commit:
// it is answered from the store's callback. The Session stream is a
// Session (session.h) on a CqStream (common/server/cq_stream.h), on raw
// bytes.
//
// Ownership: `store` and the authorizer must outlive the service, and the
// service the server and its loop. The FencedStore args point into the
// request message, which lives until the call is answered.
// Thread safety: the handlers run on the loop's thread; answers come from
// the loop or the store's commit; CloseSessions() from any thread.
#ifndef FENCEGATE_GATEWAY_GATEWAY_SERVICE_H_
#define FENCEGATE_GATEWAY_GATEWAY_SERVICE_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "common/authz/authorizer.h"
#include "common/core/stream_session.h"
#include "common/server/cq_stream.h"
#include "common/server/cq_unary.h"
#include "common/server/stream_registry.h"
#include "fencegate/v1/gateway.grpc.pb.h"
#include "gateway/fenced_store.h"

namespace fencegate::gateway {

// Every method on the asynchronous API, on raw bytes: the unary ones parse
// their requests themselves (common/server/cq_unary.h), the Session its
// messages.
using GatewayAsyncService = fencegate::v1::Gateway::WithRawMethod_Write<
    fencegate::v1::Gateway::WithRawMethod_MultiWrite<
        fencegate::v1::Gateway::WithRawMethod_Read<
            fencegate::v1::Gateway::WithRawMethod_Fence<
                fencegate::v1::Gateway::WithRawMethod_List<
                    fencegate::v1::Gateway::WithRawMethod_Describe<
                        fencegate::v1::Gateway::WithRawMethod_Session<
                            fencegate::v1::Gateway::Service>>>>>>>;

class GatewayServiceImpl {
 public:
  // At most `max_sessions` Session streams at once (--max_sessions): one
  // more ends at once with RESOURCE_EXHAUSTED (common/server/stream_registry.h).
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

  // For the server's builder.
  grpc::Service* service() { return &service_; }
  // Accepts every method's calls on `cq`, whose loop runs them. Once, after
  // the server started and before the loop runs.
  void Serve(grpc::ServerCompletionQueue* cq);

  // Ends every Session stream (now and later) with UNAVAILABLE once it has
  // answered the requests it read, and waits until all have ended or
  // `deadline` passed. Returns how many were live when it began. Call
  // before shutting the server down: StreamRegistry::AwaitEnded() says why
  // the wait.
  size_t CloseSessions(absl::Time deadline);

 private:
  void Write(grpc::ServerContext& context, const fencegate::v1::WriteRequest& request,
             fencegate::v1::WriteResponse* response, UnaryReply* reply);
  void MultiWrite(grpc::ServerContext& context,
                  const fencegate::v1::MultiWriteRequest& request,
                  fencegate::v1::MultiWriteResponse* response, UnaryReply* reply);
  void Read(grpc::ServerContext& context, const fencegate::v1::ReadRequest& request,
            fencegate::v1::ReadResponse* response, UnaryReply* reply);
  void Fence(grpc::ServerContext& context, const fencegate::v1::FenceRequest& request,
             fencegate::v1::FenceResponse* response, UnaryReply* reply);
  void List(grpc::ServerContext& context, const fencegate::v1::ListRequest& request,
            fencegate::v1::ListResponse* response, UnaryReply* reply);
  void Describe(grpc::ServerContext& context,
                const fencegate::v1::DescribeResourceRequest& request,
                fencegate::v1::DescribeResourceResponse* response, UnaryReply* reply);

  // Accepts `handle`'s calls, asked for with `request_call`, on `cq`.
  template <typename Request, typename Response, typename RequestCall>
  void Add(grpc::ServerCompletionQueue* cq, RequestCall request_call,
           void (GatewayServiceImpl::*handle)(grpc::ServerContext&, const Request&,
                                              Response*, UnaryReply*));

  // True once it answered the call with INVALID_ARGUMENT (fields we do not
  // know) or PERMISSION_DENIED (the policy does not let the caller make
  // it).
  template <typename Request>
  bool Refused(grpc::ServerContext& context, const Request& request,
               UnaryReply* reply) const;

  FencedStore* const store_;
  const authz::Authorizer* const authorizer_;  // null: no policy
  const StreamLimits session_limits_;
  StreamRegistry sessions_;
  GatewayAsyncService service_;
  std::vector<std::unique_ptr<CqAcceptor>> methods_;
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_GATEWAY_SERVICE_H_
