#include "gateway/gateway_service.h"

#include <optional>
#include <string>
#include <utility>

#include "common/core/validation.h"
#include "common/server/tls.h"
#include "gateway/gateway_call_authz.h"
#include "gateway/request_protos.h"
#include "gateway/session.h"

namespace fencegate::gateway {

namespace v1 = ::fencegate::v1;

void GatewayServiceImpl::Serve(grpc::ServerCompletionQueue* cq) {
  Add(cq, &GatewayAsyncService::RequestWrite, &GatewayServiceImpl::Write);
  Add(cq, &GatewayAsyncService::RequestMultiWrite, &GatewayServiceImpl::MultiWrite);
  Add(cq, &GatewayAsyncService::RequestRead, &GatewayServiceImpl::Read);
  Add(cq, &GatewayAsyncService::RequestFence, &GatewayServiceImpl::Fence);
  Add(cq, &GatewayAsyncService::RequestList, &GatewayServiceImpl::List);
  Add(cq, &GatewayAsyncService::RequestDescribe, &GatewayServiceImpl::Describe);
  methods_.push_back(std::make_unique<CqStreamAcceptor>(
      cq,
      [this](grpc::ServerContext* context, RawServerStream* stream,
             grpc::ServerCompletionQueue* queue,
             void* tag) { service_.RequestSession(context, stream, queue, queue, tag); },
      [this](grpc::ServerContext& context, StreamTransport* transport) {
        std::string subject =
            authorizer_ != nullptr ? PeerSubject(context) : std::string();
        return gateway::Session::Start(store_, session_limits_, transport, authorizer_,
                                       std::move(subject));
      },
      &sessions_));
  for (auto& method : methods_) method->Accept();
}

template <typename Request, typename Response, typename RequestCall>
void GatewayServiceImpl::Add(grpc::ServerCompletionQueue* cq, RequestCall request_call,
                             void (GatewayServiceImpl::*handle)(grpc::ServerContext&,
                                                                const Request&, Response*,
                                                                UnaryReply*)) {
  using Method = CqUnaryMethod<Request, Response>;
  methods_.push_back(std::make_unique<Method>(
      cq,
      [this, request_call](grpc::ServerContext* context, grpc::ByteBuffer* request,
                           typename Method::Responder* responder,
                           grpc::ServerCompletionQueue* queue, void* tag) {
        (service_.*request_call)(context, request, responder, queue, queue, tag);
      },
      [this, handle](grpc::ServerContext& context, const Request& request,
                     Response* response, UnaryReply* reply) {
        (this->*handle)(context, request, response, reply);
      }));
}

template <typename Request>
bool GatewayServiceImpl::Refused(grpc::ServerContext& context, const Request& request,
                                 UnaryReply* reply) const {
  absl::Status status = RejectUnknownFields(request);
  if (status.ok() && authorizer_ != nullptr) {
    status = AuthorizeCall(authorizer_, PeerSubject(context), request);
  }
  if (status.ok()) return false;
  reply->Finish(status);
  return true;
}

void GatewayServiceImpl::Write(grpc::ServerContext& context,
                               const v1::WriteRequest& request,
                               v1::WriteResponse* response, UnaryReply* reply) {
  FencedStore::Arrival arrival = store_->Arriving();
  if (Refused(context, request, reply)) return;
  store_->Write(WriteArgsFromProto(request),
                [reply, response](absl::StatusOr<WriteResult> result) {
                  if (result.ok()) FillWriteResponse(*result, response);
                  reply->Finish(result.status());
                });
}

void GatewayServiceImpl::MultiWrite(grpc::ServerContext& context,
                                    const v1::MultiWriteRequest& request,
                                    v1::MultiWriteResponse* response, UnaryReply* reply) {
  FencedStore::Arrival arrival = store_->Arriving();
  if (Refused(context, request, reply)) return;
  const int count = request.mutations_size();
  store_->Write(MultiWriteArgsFromProto(request),
                [reply, response, count](absl::StatusOr<WriteResult> result) {
                  if (result.ok()) FillMultiWriteResponse(*result, count, response);
                  reply->Finish(result.status());
                });
}

void GatewayServiceImpl::Read(grpc::ServerContext& context,
                              const v1::ReadRequest& request, v1::ReadResponse* response,
                              UnaryReply* reply) {
  // A plain read (token 0) commits nothing: it holds no batch back.
  std::optional<FencedStore::Arrival> arrival;
  if (request.token() != 0) arrival.emplace(store_->Arriving());
  if (Refused(context, request, reply)) return;
  store_->Read(ReadArgsFromProto(request),
               [reply, response](absl::StatusOr<ReadResult> result) {
                 if (result.ok()) FillReadResponse(*std::move(result), response);
                 reply->Finish(result.status());
               });
}

void GatewayServiceImpl::Fence(grpc::ServerContext& context,
                               const v1::FenceRequest& request,
                               v1::FenceResponse* response, UnaryReply* reply) {
  FencedStore::Arrival arrival = store_->Arriving();
  if (Refused(context, request, reply)) return;
  store_->Fence(FenceArgsFromProto(request),
                [reply, response](absl::StatusOr<FenceResult> result) {
                  if (result.ok()) FillFenceResponse(*result, response);
                  reply->Finish(result.status());
                });
}

void GatewayServiceImpl::List(grpc::ServerContext& context,
                              const v1::ListRequest& request, v1::ListResponse* response,
                              UnaryReply* reply) {
  if (Refused(context, request, reply)) return;
  absl::StatusOr<ListResult> result = store_->List(ListArgsFromProto(request));
  if (result.ok()) FillListResponse(*std::move(result), response);
  reply->Finish(result.status());
}

void GatewayServiceImpl::Describe(grpc::ServerContext& context,
                                  const v1::DescribeResourceRequest& request,
                                  v1::DescribeResourceResponse* response,
                                  UnaryReply* reply) {
  if (Refused(context, request, reply)) return;
  absl::StatusOr<ResourceStats> stats = store_->Describe(request.resource());
  if (stats.ok()) FillDescribeResponse(*stats, response);
  reply->Finish(stats.status());
}

size_t GatewayServiceImpl::CloseSessions(absl::Time deadline) {
  const size_t live = sessions_.live();
  sessions_.CloseAll(absl::UnavailableError(
      "the gateway is shutting down; every request of this stream that got no answer "
      "was not applied: resend it on a new stream, to another instance or after the "
      "restart"));
  sessions_.AwaitEnded(deadline);
  return live;
}

}  // namespace fencegate::gateway
