#include "gateway/request_protos.h"

#include <utility>

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

}  // namespace

WriteArgs WriteArgsFromProto(const v1::WriteRequest& request) {
  WriteArgs args;
  args.resource = request.resource();
  args.token = request.token();
  args.signature = ViewOf(request.signature());
  args.mode = request.mode();
  args.mutations.push_back(FromProto(request.mutation()));
  return args;
}

WriteArgs MultiWriteArgsFromProto(const v1::MultiWriteRequest& request) {
  WriteArgs args;
  args.resource = request.resource();
  args.token = request.token();
  args.signature = ViewOf(request.signature());
  args.mode = request.mode();
  args.multi = true;
  args.mutations.reserve(request.mutations_size());
  for (const v1::Mutation& m : request.mutations()) {
    args.mutations.push_back(FromProto(m));
  }
  return args;
}

ReadArgs ReadArgsFromProto(const v1::ReadRequest& request) {
  ReadArgs args;
  args.resource = request.resource();
  args.key = request.key();
  args.token = request.token();
  args.signature = ViewOf(request.signature());
  args.mode = request.mode();
  return args;
}

FenceArgs FenceArgsFromProto(const v1::FenceRequest& request) {
  FenceArgs args;
  args.resource = request.resource();
  args.token = request.token();
  args.signature = ViewOf(request.signature());
  args.mode = request.mode();
  return args;
}

ListArgs ListArgsFromProto(const v1::ListRequest& request) {
  ListArgs args;
  args.resource = request.resource();
  args.page_size = request.page_size();
  args.page_token = request.page_token();
  return args;
}

void FillWriteResponse(const WriteResult& result, v1::WriteResponse* response) {
  response->set_version(result.version);
  response->set_max_token(result.max_token);
}

void FillMultiWriteResponse(const WriteResult& result, int count,
                            v1::MultiWriteResponse* response) {
  response->mutable_versions()->Resize(count, result.version);
  response->set_max_token(result.max_token);
}

void FillReadResponse(ReadResult result, v1::ReadResponse* response) {
  response->set_found(result.found);
  response->set_value(std::move(result.value));
  response->set_version(result.version);
  response->set_max_token(result.max_token);
}

void FillFenceResponse(const FenceResult& result, v1::FenceResponse* response) {
  response->set_max_token(result.max_token);
}

void FillListResponse(ListResult result, v1::ListResponse* response) {
  response->mutable_keys()->Reserve(static_cast<int>(result.keys.size()));
  for (KeyInfo& info : result.keys) {
    v1::KeyInfo* out = response->add_keys();
    out->set_key(std::move(info.key));
    out->set_version(info.version);
    out->set_size_bytes(info.size_bytes);
  }
  response->set_next_page_token(std::move(result.next_page_token));
}

void FillDescribeResponse(const ResourceStats& stats,
                          v1::DescribeResourceResponse* response) {
  response->set_max_token(stats.max_token);
  response->set_key_count(stats.key_count);
  response->set_total_bytes(stats.total_bytes);
}

}  // namespace fencegate::gateway
