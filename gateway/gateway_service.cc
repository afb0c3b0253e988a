#include "gateway/gateway_service.h"

#include <utility>

#include "common/grpc_status.h"
#include "common/validation.h"

namespace fencegate::gateway {
namespace {

namespace v1 = ::fencegate::v1;

Mutation FromProto(const v1::Mutation& m) {
  Mutation out;
  out.key = m.key();
  switch (m.kind_case()) {
    case v1::Mutation::kValue:
      out.kind = Mutation::Kind::kPut;
      out.value = m.value();
      break;
    case v1::Mutation::kDelete:
      // delete=false says nothing; it is refused like an unset kind.
      if (m.delete_()) out.kind = Mutation::Kind::kDelete;
      break;
    case v1::Mutation::KIND_NOT_SET:
      break;
  }
  if (m.has_expected_version()) out.expected_version = m.expected_version();
  return out;
}

SignatureView ViewOf(const v1::TokenSignature& signature) {
  return SignatureView{signature.key_id(), signature.mac()};
}

// Finishes `reactor` at once if `request` carries fields we do not know.
bool RejectedUnknown(const google::protobuf::Message& request,
                     grpc::ServerUnaryReactor* reactor) {
  absl::Status status = RejectUnknownFields(request);
  if (status.ok()) return false;
  reactor->Finish(ToGrpcStatus(status));
  return true;
}

}  // namespace

grpc::ServerUnaryReactor* GatewayServiceImpl::Write(
    grpc::CallbackServerContext* context, const v1::WriteRequest* request,
    v1::WriteResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (RejectedUnknown(*request, reactor)) return reactor;
  WriteArgs args;
  args.resource = request->resource();
  args.token = request->token();
  args.signature = ViewOf(request->signature());
  args.mutations.push_back(FromProto(request->mutation()));
  store_->Write(std::move(args),
                [reactor, response](absl::StatusOr<WriteResult> result) {
                  if (result.ok()) {
                    response->set_version(result->version);
                    response->set_max_token(result->max_token);
                  }
                  reactor->Finish(ToGrpcStatus(result.status()));
                });
  return reactor;
}

grpc::ServerUnaryReactor* GatewayServiceImpl::MultiWrite(
    grpc::CallbackServerContext* context, const v1::MultiWriteRequest* request,
    v1::MultiWriteResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (RejectedUnknown(*request, reactor)) return reactor;
  WriteArgs args;
  args.resource = request->resource();
  args.token = request->token();
  args.signature = ViewOf(request->signature());
  args.multi = true;
  args.mutations.reserve(request->mutations_size());
  for (const v1::Mutation& m : request->mutations()) {
    args.mutations.push_back(FromProto(m));
  }
  const int count = request->mutations_size();
  store_->Write(std::move(args),
                [reactor, response, count](absl::StatusOr<WriteResult> result) {
                  if (result.ok()) {
                    // One revision for the whole request: every key has it.
                    response->mutable_versions()->Resize(count, result->version);
                    response->set_max_token(result->max_token);
                  }
                  reactor->Finish(ToGrpcStatus(result.status()));
                });
  return reactor;
}

grpc::ServerUnaryReactor* GatewayServiceImpl::Read(
    grpc::CallbackServerContext* context, const v1::ReadRequest* request,
    v1::ReadResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (RejectedUnknown(*request, reactor)) return reactor;
  ReadArgs args;
  args.resource = request->resource();
  args.key = request->key();
  args.token = request->token();
  args.signature = ViewOf(request->signature());
  store_->Read(args, [reactor, response](absl::StatusOr<ReadResult> result) {
    if (result.ok()) {
      response->set_found(result->found);
      response->set_value(std::move(result->value));
      response->set_version(result->version);
      response->set_max_token(result->max_token);
    }
    reactor->Finish(ToGrpcStatus(result.status()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* GatewayServiceImpl::Fence(
    grpc::CallbackServerContext* context, const v1::FenceRequest* request,
    v1::FenceResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (RejectedUnknown(*request, reactor)) return reactor;
  FenceArgs args;
  args.resource = request->resource();
  args.token = request->token();
  args.signature = ViewOf(request->signature());
  store_->Fence(args, [reactor, response](absl::StatusOr<FenceResult> result) {
    if (result.ok()) response->set_max_token(result->max_token);
    reactor->Finish(ToGrpcStatus(result.status()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* GatewayServiceImpl::List(
    grpc::CallbackServerContext* context, const v1::ListRequest* request,
    v1::ListResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (RejectedUnknown(*request, reactor)) return reactor;
  ListArgs args;
  args.resource = request->resource();
  args.page_size = request->page_size();
  args.page_token = request->page_token();
  absl::StatusOr<ListResult> result = store_->List(args);
  if (result.ok()) {
    response->mutable_keys()->Reserve(static_cast<int>(result->keys.size()));
    for (KeyInfo& info : result->keys) {
      v1::KeyInfo* out = response->add_keys();
      out->set_key(std::move(info.key));
      out->set_version(info.version);
      out->set_size_bytes(info.size_bytes);
    }
    response->set_next_page_token(std::move(result->next_page_token));
  }
  reactor->Finish(ToGrpcStatus(result.status()));
  return reactor;
}

grpc::ServerUnaryReactor* GatewayServiceImpl::Describe(
    grpc::CallbackServerContext* context,
    const v1::DescribeResourceRequest* request,
    v1::DescribeResourceResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (RejectedUnknown(*request, reactor)) return reactor;
  absl::StatusOr<ResourceStats> stats = store_->Describe(request->resource());
  if (stats.ok()) {
    response->set_max_token(stats->max_token);
    response->set_key_count(stats->key_count);
    response->set_total_bytes(stats->total_bytes);
  }
  reactor->Finish(ToGrpcStatus(stats.status()));
  return reactor;
}

}  // namespace fencegate::gateway
