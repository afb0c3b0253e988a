#include "common/grpc/grpc_status.h"

#include <string>

#include "absl/strings/cord.h"
#include "common/base/errors.h"
#include "fencegate/v1/errors.pb.h"

namespace fencegate {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  auto code = static_cast<grpc::StatusCode>(status.code());
  std::string message(status.message());
  if (!status.GetPayload(kErrorDetailUrl)) return grpc::Status(code, message);
  fencegate::v1::RpcStatus details;
  ToRpcStatus(status, &details);
  return grpc::Status(code, message, details.SerializeAsString());
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  fencegate::v1::RpcStatus details;
  if (status.error_details().empty() || !details.ParseFromString(status.error_details())) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        status.error_message());
  }
  // The code and message are the call's, whatever the details say.
  details.set_code(status.error_code());
  details.set_message(status.error_message());
  return FromRpcStatus(details);
}

}  // namespace fencegate
