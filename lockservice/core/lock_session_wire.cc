#include "lockservice/core/lock_session_wire.h"

#include "common/base/errors.h"
#include "fencegate/v1/errors.pb.h"
#include "lockservice/core/election_requests.h"
#include "lockservice/core/lock_requests.h"

namespace fencegate::lockservice {
namespace {

namespace v1 = ::fencegate::v1;

void Append(const v1::LockResult& result, std::string* out) {
  AppendElement(v1::LockSessionResponse::kResultsFieldNumber, result, out);
}

v1::LeaseLost::Reason ToProto(LeaseEnd why) {
  switch (why) {
    case LeaseEnd::kExpired:
      return v1::LeaseLost::EXPIRED;
    case LeaseEnd::kReleased:
      return v1::LeaseLost::RELEASED;
  }
  return v1::LeaseLost::REASON_UNSPECIFIED;
}

}  // namespace

void AppendAcquireResult(uint64_t request_id, const TokenSigner* signer,
                         const std::string& resource,
                         const absl::StatusOr<AcquireResult>& result, std::string* out) {
  if (!result.ok()) return AppendLockError(request_id, result.status(), out);
  v1::LockResult answer;
  answer.set_request_id(request_id);
  absl::Status filled =
      FillAcquireResponse(signer, resource, *result, answer.mutable_acquire());
  if (!filled.ok()) return AppendLockError(request_id, filled, out);
  Append(answer, out);
}

void AppendMultiAcquireResult(uint64_t request_id, const TokenSigner* signer,
                              const std::vector<std::string>& resources,
                              const absl::StatusOr<MultiAcquireResult>& result,
                              std::string* out) {
  if (!result.ok()) return AppendLockError(request_id, result.status(), out);
  v1::LockResult answer;
  answer.set_request_id(request_id);
  absl::Status filled =
      FillMultiAcquireResponse(signer, resources, *result, answer.mutable_acquire());
  if (!filled.ok()) return AppendLockError(request_id, filled, out);
  Append(answer, out);
}

void AppendRenewResult(uint64_t request_id, const TokenSigner* signer,
                       const std::string& resource, uint64_t token, int mode,
                       const absl::StatusOr<RenewResult>& result, std::string* out) {
  if (!result.ok()) return AppendLockError(request_id, result.status(), out);
  v1::LockResult answer;
  answer.set_request_id(request_id);
  FillRenewResponse(signer, resource, token, mode, *result, answer.mutable_renew());
  Append(answer, out);
}

void AppendReleaseResult(uint64_t request_id, const absl::StatusOr<ReleaseResult>& result,
                         std::string* out) {
  if (!result.ok()) return AppendLockError(request_id, result.status(), out);
  v1::LockResult answer;
  answer.set_request_id(request_id);
  FillReleaseResponse(*result, answer.mutable_release());
  Append(answer, out);
}

void AppendDescribeResult(uint64_t request_id, const absl::StatusOr<ResourceInfo>& result,
                          std::string* out) {
  if (!result.ok()) return AppendLockError(request_id, result.status(), out);
  v1::LockResult answer;
  answer.set_request_id(request_id);
  FillDescribeResponse(*result, answer.mutable_describe());
  Append(answer, out);
}

void AppendProclaimResult(uint64_t request_id,
                          const absl::StatusOr<ProclaimResult>& result,
                          std::string* out) {
  if (!result.ok()) return AppendLockError(request_id, result.status(), out);
  v1::LockResult answer;
  answer.set_request_id(request_id);
  answer.mutable_proclaim()->set_seq(result->seq);
  Append(answer, out);
}

void AppendLeaderResult(uint64_t request_id, const absl::StatusOr<ElectionChange>& result,
                        std::string* out) {
  if (!result.ok()) return AppendLockError(request_id, result.status(), out);
  v1::LockResult answer;
  answer.set_request_id(request_id);
  FillElectionChange(*result, answer.mutable_leader()->mutable_state());
  Append(answer, out);
}

void AppendResignResult(uint64_t request_id, const absl::StatusOr<ReleaseResult>& result,
                        std::string* out) {
  if (!result.ok()) return AppendLockError(request_id, result.status(), out);
  v1::LockResult answer;
  answer.set_request_id(request_id);
  answer.mutable_resign();
  Append(answer, out);
}

void AppendLockError(uint64_t request_id, const absl::Status& status, std::string* out) {
  v1::LockResult answer;
  answer.set_request_id(request_id);
  ToRpcStatus(status, answer.mutable_error());
  Append(answer, out);
}

void AppendLeaseLost(const LeaseLoss& loss, std::string* out) {
  v1::LeaseLost lost;
  lost.set_resource(loss.resource);
  lost.set_token(loss.token);
  lost.set_reason(ToProto(loss.why));
  AppendElement(v1::LockSessionResponse::kLostFieldNumber, lost, out);
}

}  // namespace fencegate::lockservice
