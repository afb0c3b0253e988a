// Errors that carry machine-readable detail: why a sequencer check failed and
// the current token, or which request field was at fault. The detail rides in
// an absl::Status payload, so core code stays free of gRPC types;
// common/grpc/grpc_status.h moves it to and from the wire
// (fencegate.v1.ErrorDetail). The catalogue of conditions and codes is
// docs/errors.md.
//
// Thread safety: free functions on values; safe from any thread.
#ifndef FENCEGATE_COMMON_BASE_ERRORS_H_
#define FENCEGATE_COMMON_BASE_ERRORS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace fencegate {
namespace v1 {
class RpcStatus;
}

enum class ErrorReason {
  kUnspecified = 0,
  kLeaseLost = 1,        // ABORTED: the lease is no longer the caller's
  kStaleToken = 2,       // ABORTED: a larger token was seen for the resource
  kVersionMismatch = 3,  // ABORTED: expected_version did not match
  kInvalidField = 4,     // INVALID_ARGUMENT: `field` is malformed
  kBadSignature = 5,     // PERMISSION_DENIED: the token's signature is not valid
};

struct ErrorInfo {
  ErrorReason reason = ErrorReason::kUnspecified;
  uint64_t current_token = 0;
  uint64_t current_version = 0;
  std::string field;
  // INVALID_FIELD: the largest value accepted for `field` (0: no bound).
  uint64_t max_value = 0;
};

// The payload key under which ErrorInfo is stored in an absl::Status.
inline constexpr absl::string_view kErrorDetailUrl =
    "type.googleapis.com/fencegate.v1.ErrorDetail";

// INVALID_ARGUMENT naming `field`; `message` says what is wrong and the limit;
// `max_value` (0: none) is the largest value accepted, in the field's unit.
absl::Status InvalidFieldError(absl::string_view field, absl::string_view message,
                               uint64_t max_value = 0);
// ABORTED, reason kLeaseLost; `holder_token` is the current holder's (0: none).
absl::Status LeaseLostError(absl::string_view message, uint64_t holder_token);
// ABORTED, reason kStaleToken; `max_token` is the resource's current fence.
absl::Status StaleTokenError(absl::string_view message, uint64_t max_token);
// ABORTED, reason kVersionMismatch.
absl::Status VersionMismatchError(absl::string_view message, uint64_t max_token,
                                  uint64_t current_version);

// PERMISSION_DENIED, reason kBadSignature: the token's signature is missing
// or not valid for this resource and token.
absl::Status BadSignatureError(absl::string_view message);

// Attaches `info` to `status` (which must not be OK).
void SetErrorInfo(absl::Status& status, const ErrorInfo& info);
// The detail attached by one of the functions above, if any.
std::optional<ErrorInfo> GetErrorInfo(const absl::Status& status);

// A status as the wire's RpcStatus (errors.proto): code, message, and the
// ErrorInfo, if any, as an ErrorDetail in `details`. The same form travels
// in a failed unary call's trailer (common/grpc/grpc_status.h) and in a failed
// request's answer on a stream. `status` must not be OK.
void ToRpcStatus(const absl::Status& status, v1::RpcStatus* out);
// The reverse; details other than an ErrorDetail are dropped.
absl::Status FromRpcStatus(const v1::RpcStatus& status);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_BASE_ERRORS_H_
