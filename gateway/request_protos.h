// The gateway's requests and replies between their protos (fencegate.v1,
// gateway.proto) and FencedStore's plain structs (requests.h): all that
// GatewayServiceImpl does to a call apart from gRPC itself. No gRPC types,
// so the fuzz target (tests/fuzz/gateway_fuzzer.cc) drives exactly the path
// a call takes: RejectUnknownFields (common/core/validation.h), *ArgsFromProto,
// the FencedStore call, Fill*Response.
//
// Ownership: the *Args point into `request` (requests.h), which must outlive
// the store's callback. Bad values pass through unchanged for FencedStore
// to refuse with INVALID_ARGUMENT; a Mutation with neither value nor
// delete=true (delete=false included) becomes Kind::kUnset.
//
// Thread safety: pure functions.
#ifndef FENCEGATE_GATEWAY_REQUEST_PROTOS_H_
#define FENCEGATE_GATEWAY_REQUEST_PROTOS_H_

#include "fencegate/v1/gateway.pb.h"
#include "gateway/requests.h"
#include "gateway/storage_backend.h"

namespace fencegate::gateway {

WriteArgs WriteArgsFromProto(const fencegate::v1::WriteRequest& request);
WriteArgs MultiWriteArgsFromProto(const fencegate::v1::MultiWriteRequest& request);
ReadArgs ReadArgsFromProto(const fencegate::v1::ReadRequest& request);
FenceArgs FenceArgsFromProto(const fencegate::v1::FenceRequest& request);
ListArgs ListArgsFromProto(const fencegate::v1::ListRequest& request);

void FillWriteResponse(const WriteResult& result, fencegate::v1::WriteResponse* response);
// One revision for the whole request: each of the `count` keys has it.
void FillMultiWriteResponse(const WriteResult& result, int count,
                            fencegate::v1::MultiWriteResponse* response);
void FillReadResponse(ReadResult result, fencegate::v1::ReadResponse* response);
void FillFenceResponse(const FenceResult& result, fencegate::v1::FenceResponse* response);
void FillListResponse(ListResult result, fencegate::v1::ListResponse* response);
void FillDescribeResponse(const ResourceStats& stats,
                          fencegate::v1::DescribeResourceResponse* response);

}  // namespace fencegate::gateway

#endif  // FENCEGATE_GATEWAY_REQUEST_PROTOS_H_
