#include "common/base/errors.h"

#include "absl/strings/cord.h"
#include "fencegate/v1/errors.pb.h"

namespace fencegate {
namespace {

absl::Status WithInfo(absl::StatusCode code, absl::string_view message,
                      const ErrorInfo& info) {
  absl::Status status(code, message);
  SetErrorInfo(status, info);
  return status;
}

}  // namespace

absl::Status InvalidFieldError(absl::string_view field, absl::string_view message,
                               uint64_t max_value) {
  ErrorInfo info;
  info.reason = ErrorReason::kInvalidField;
  info.field = std::string(field);
  info.max_value = max_value;
  return WithInfo(absl::StatusCode::kInvalidArgument, message, info);
}

absl::Status LeaseLostError(absl::string_view message, uint64_t holder_token) {
  ErrorInfo info;
  info.reason = ErrorReason::kLeaseLost;
  info.current_token = holder_token;
  return WithInfo(absl::StatusCode::kAborted, message, info);
}

absl::Status StaleTokenError(absl::string_view message, uint64_t max_token) {
  ErrorInfo info;
  info.reason = ErrorReason::kStaleToken;
  info.current_token = max_token;
  return WithInfo(absl::StatusCode::kAborted, message, info);
}

absl::Status VersionMismatchError(absl::string_view message, uint64_t max_token,
                                  uint64_t current_version) {
  ErrorInfo info;
  info.reason = ErrorReason::kVersionMismatch;
  info.current_token = max_token;
  info.current_version = current_version;
  return WithInfo(absl::StatusCode::kAborted, message, info);
}

absl::Status BadSignatureError(absl::string_view message) {
  ErrorInfo info;
  info.reason = ErrorReason::kBadSignature;
  return WithInfo(absl::StatusCode::kPermissionDenied, message, info);
}

void SetErrorInfo(absl::Status& status, const ErrorInfo& info) {
  fencegate::v1::ErrorDetail detail;
  detail.set_reason(static_cast<fencegate::v1::ErrorDetail::Reason>(info.reason));
  detail.set_current_token(info.current_token);
  detail.set_current_version(info.current_version);
  detail.set_field(info.field);
  detail.set_max_value(info.max_value);
  status.SetPayload(kErrorDetailUrl, absl::Cord(detail.SerializeAsString()));
}

std::optional<ErrorInfo> GetErrorInfo(const absl::Status& status) {
  auto payload = status.GetPayload(kErrorDetailUrl);
  if (!payload) return std::nullopt;
  fencegate::v1::ErrorDetail detail;
  if (!detail.ParseFromString(std::string(*payload))) return std::nullopt;
  ErrorInfo info;
  info.reason = static_cast<ErrorReason>(detail.reason());
  info.current_token = detail.current_token();
  info.current_version = detail.current_version();
  info.field = detail.field();
  info.max_value = detail.max_value();
  return info;
}

void ToRpcStatus(const absl::Status& status, v1::RpcStatus* out) {
  out->set_code(static_cast<int>(status.code()));
  out->set_message(std::string(status.message()));
  auto payload = status.GetPayload(kErrorDetailUrl);
  if (!payload) return;
  google::protobuf::Any* any = out->add_details();
  any->set_type_url(std::string(kErrorDetailUrl));
  any->set_value(std::string(*payload));
}

absl::Status FromRpcStatus(const v1::RpcStatus& status) {
  absl::Status result(static_cast<absl::StatusCode>(status.code()), status.message());
  for (const google::protobuf::Any& any : status.details()) {
    if (any.type_url() == kErrorDetailUrl) {
      result.SetPayload(kErrorDetailUrl, absl::Cord(any.value()));
    }
  }
  return result;
}

}  // namespace fencegate
