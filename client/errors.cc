#include "fencegate/client/errors.h"

#include "common/errors.h"

namespace fencegate::client {
namespace {

bool HasReason(const absl::Status& status, absl::StatusCode code, ErrorReason reason) {
  if (status.code() != code) return false;
  std::optional<ErrorInfo> info = GetErrorInfo(status);
  return info.has_value() && info->reason == reason;
}

}  // namespace

bool IsStaleToken(const absl::Status& status) {
  return HasReason(status, absl::StatusCode::kAborted, ErrorReason::kStaleToken);
}

bool IsLeaseLost(const absl::Status& status) {
  return HasReason(status, absl::StatusCode::kAborted, ErrorReason::kLeaseLost);
}

bool IsVersionMismatch(const absl::Status& status) {
  return HasReason(status, absl::StatusCode::kAborted, ErrorReason::kVersionMismatch);
}

bool IsBadSignature(const absl::Status& status) {
  return HasReason(status, absl::StatusCode::kPermissionDenied,
                   ErrorReason::kBadSignature);
}

bool IsNotAcquired(const absl::Status& status) {
  return status.code() == absl::StatusCode::kFailedPrecondition;
}

uint64_t CurrentToken(const absl::Status& status) {
  std::optional<ErrorInfo> info = GetErrorInfo(status);
  return info ? info->current_token : 0;
}

uint64_t CurrentVersion(const absl::Status& status) {
  std::optional<ErrorInfo> info = GetErrorInfo(status);
  return info ? info->current_version : 0;
}

}  // namespace fencegate::client
