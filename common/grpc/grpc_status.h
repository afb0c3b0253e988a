// The one place absl::Status and grpc::Status are converted, both ways. An
// ErrorInfo payload (common/base/errors.h) travels as a serialized
// fencegate.v1.RpcStatus in grpc::Status::error_details().
//
// Thread safety: free functions on values; safe from any thread.
#ifndef FENCEGATE_COMMON_GRPC_GRPC_STATUS_H_
#define FENCEGATE_COMMON_GRPC_GRPC_STATUS_H_

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace fencegate {

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_GRPC_GRPC_STATUS_H_
