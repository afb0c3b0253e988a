#include "gateway/gateway_service.h"

#include <optional>
#include <utility>

#include "common/core/validation.h"
#include "common/grpc/grpc_status.h"
#include "common/server/tls.h"
#include "gateway/gateway_call_authz.h"
#include "gateway/request_protos.h"
#include "gateway/session.h"

namespace fencegate::gateway {
namespace {

namespace v1 = ::fencegate::v1;

// Finishes `reactor` at once if `request` carries fields we do not know.
bool RejectedUnknown(const google::protobuf::Message& request,
                     grpc::ServerUnaryReactor* reactor) {
  absl::Status status = RejectUnknownFields(request);
  if (status.ok()) return false;
  reactor->Finish(ToGrpcStatus(status));
  return true;
}

}  // namespace

template <typename Request>
bool GatewayServiceImpl::Refused(grpc::CallbackServerContext* context,
                                 const Request& request,
                                 grpc::ServerUnaryReactor* reactor) const {
  if (authorizer_ == nullptr) return false;
  absl::Status allowed = AuthorizeCall(authorizer_, PeerSubject(*context), request);
  if (allowed.ok()) return false;
  reactor->Finish(ToGrpcStatus(allowed));
  return true;
}

grpc::ServerUnaryReactor* GatewayServiceImpl::Write(
    grpc::CallbackServerContext* context, const v1::WriteRequest* request,
    v1::WriteResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  FencedStore::Arrival arrival = store_->Arriving();
  if (RejectedUnknown(*request, reactor)) return reactor;
  if (Refused(context, *request, reactor)) return reactor;
  store_->Write(WriteArgsFromProto(*request),
                [reactor, response](absl::StatusOr<WriteResult> result) {
                  if (result.ok()) FillWriteResponse(*result, response);
                  reactor->Finish(ToGrpcStatus(result.status()));
                });
  return reactor;
}

grpc::ServerUnaryReactor* GatewayServiceImpl::MultiWrite(
    grpc::CallbackServerContext* context, const v1::MultiWriteRequest* request,
    v1::MultiWriteResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  FencedStore::Arrival arrival = store_->Arriving();
  if (RejectedUnknown(*request, reactor)) return reactor;
  if (Refused(context, *request, reactor)) return reactor;
  const int count = request->mutations_size();
  store_->Write(MultiWriteArgsFromProto(*request),
                [reactor, response, count](absl::StatusOr<WriteResult> result) {
                  if (result.ok()) FillMultiWriteResponse(*result, count, response);
                  reactor->Finish(ToGrpcStatus(result.status()));
                });
  return reactor;
}

grpc::ServerUnaryReactor* GatewayServiceImpl::Read(
    grpc::CallbackServerContext* context, const v1::ReadRequest* request,
    v1::ReadResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  // A plain read (token 0) commits nothing: it holds no batch back.
  std::optional<FencedStore::Arrival> arrival;
  if (request->token() != 0) arrival.emplace(store_->Arriving());
  if (RejectedUnknown(*request, reactor)) return reactor;
  if (Refused(context, *request, reactor)) return reactor;
  store_->Read(ReadArgsFromProto(*request),
               [reactor, response](absl::StatusOr<ReadResult> result) {
    if (result.ok()) FillReadResponse(*std::move(result), response);
    reactor->Finish(ToGrpcStatus(result.status()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* GatewayServiceImpl::Fence(
    grpc::CallbackServerContext* context, const v1::FenceRequest* request,
    v1::FenceResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  FencedStore::Arrival arrival = store_->Arriving();
  if (RejectedUnknown(*request, reactor)) return reactor;
  if (Refused(context, *request, reactor)) return reactor;
  store_->Fence(FenceArgsFromProto(*request),
                [reactor, response](absl::StatusOr<FenceResult> result) {
    if (result.ok()) FillFenceResponse(*result, response);
    reactor->Finish(ToGrpcStatus(result.status()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* GatewayServiceImpl::List(
    grpc::CallbackServerContext* context, const v1::ListRequest* request,
    v1::ListResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (RejectedUnknown(*request, reactor)) return reactor;
  if (Refused(context, *request, reactor)) return reactor;
  absl::StatusOr<ListResult> result = store_->List(ListArgsFromProto(*request));
  if (result.ok()) FillListResponse(*std::move(result), response);
  reactor->Finish(ToGrpcStatus(result.status()));
  return reactor;
}

grpc::ServerUnaryReactor* GatewayServiceImpl::Describe(
    grpc::CallbackServerContext* context,
    const v1::DescribeResourceRequest* request,
    v1::DescribeResourceResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (RejectedUnknown(*request, reactor)) return reactor;
  if (Refused(context, *request, reactor)) return reactor;
  absl::StatusOr<ResourceStats> stats = store_->Describe(request->resource());
  if (stats.ok()) FillDescribeResponse(*stats, response);
  reactor->Finish(ToGrpcStatus(stats.status()));
  return reactor;
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* GatewayServiceImpl::Session(
    grpc::CallbackServerContext* context) {
  std::string subject = authorizer_ != nullptr ? PeerSubject(*context) : std::string();
  return new StreamReactor(
      [&](StreamTransport* transport) {
        return gateway::Session::Start(store_, session_limits_, transport, authorizer_,
                                       std::move(subject));
      },
      &sessions_);
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
