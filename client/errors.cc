#include "fencegate/client/errors.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/base/errors.h"

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

absl::Status FromSqlFencingError(absl::string_view sqlstate, absl::string_view message) {
  message = absl::StripAsciiWhitespace(message);
  if (sqlstate.empty()) return absl::InternalError(message);  // libpqxx did not say
  if (sqlstate == "ZF001") {
    uint64_t current = 0;
    constexpr absl::string_view kDetail = "current_token=";
    if (size_t at = message.find(kDetail); at != absl::string_view::npos) {
      absl::string_view digits = message.substr(at + kDetail.size());
      digits = digits.substr(0, digits.find_first_not_of("0123456789"));
      if (!absl::SimpleAtoi(digits, &current)) current = 0;
    }
    return StaleTokenError(message, current);
  }
  if (sqlstate == "ZF002") return BadSignatureError(message);
  if (sqlstate == "22004" || sqlstate == "22023")
    return absl::InvalidArgumentError(message);
  if (sqlstate == "25P01") return absl::FailedPreconditionError(message);
  if (sqlstate == "40001" || sqlstate == "40P01") {
    return absl::AbortedError(absl::StrCat(
        message, " (SQLSTATE ", sqlstate,
        ": the transaction lost a race and changed nothing; run it again from BEGIN, "
        "where a stale token then fails with ZF001)"));
  }
  if (absl::StartsWith(sqlstate, "08")) return absl::UnavailableError(message);
  return absl::InternalError(absl::StrCat("SQLSTATE ", sqlstate, ": ", message));
}

}  // namespace fencegate::client
