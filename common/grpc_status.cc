#include "common/grpc_status.h"

#include <string>

#include "absl/strings/cord.h"
#include "common/errors.h"
#include "fencegate/v1/errors.pb.h"

namespace fencegate {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  auto code = static_cast<grpc::StatusCode>(status.code());
  std::string message(status.message());
  auto payload = status.GetPayload(kErrorDetailUrl);
  if (!payload) return grpc::Status(code, message);
  fencegate::v1::RpcStatus details;
  details.set_code(static_cast<int>(code));
  details.set_message(message);
  google::protobuf::Any* any = details.add_details();
  any->set_type_url(std::string(kErrorDetailUrl));
  any->set_value(std::string(*payload));
  return grpc::Status(code, message, details.SerializeAsString());
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  absl::Status result(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
  fencegate::v1::RpcStatus details;
  if (!status.error_details().empty() &&
      details.ParseFromString(status.error_details())) {
    for (const google::protobuf::Any& any : details.details()) {
      if (any.type_url() == kErrorDetailUrl) {
        result.SetPayload(kErrorDetailUrl, absl::Cord(any.value()));
      }
    }
  }
  return result;
}

}  // namespace fencegate
