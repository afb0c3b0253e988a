#include "lockservice/core/lock_session_wire.h"

#include <string>
#include <type_traits>
#include <vector>

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

// Appends the answer to call `request_id`: `result`'s error, or the
// LockResult `fill` makes of its value; a `fill` that returns a Status may
// fail, and then its error is the answer.
template <typename Result, typename Fill>
void AppendResult(uint64_t request_id, const absl::StatusOr<Result>& result,
                  std::string* out, const Fill& fill) {
  if (!result.ok()) return AppendLockError(request_id, result.status(), out);
  v1::LockResult answer;
  answer.set_request_id(request_id);
  if constexpr (std::is_same_v<decltype(fill(*result, answer)), absl::Status>) {
    absl::Status filled = fill(*result, answer);
    if (!filled.ok()) return AppendLockError(request_id, filled, out);
  } else {
    fill(*result, answer);
  }
  Append(answer, out);
}

}  // namespace

void AppendAcquireResult(uint64_t request_id, const TokenSigner* signer,
                         const std::string& resource,
                         const absl::StatusOr<AcquireResult>& result, std::string* out) {
  AppendResult(request_id, result, out, [&](const AcquireResult& r, v1::LockResult& a) {
    return FillAcquireResponse(signer, resource, r, a.mutable_acquire());
  });
}

void AppendMultiAcquireResult(uint64_t request_id, const TokenSigner* signer,
                              const std::vector<std::string>& resources,
                              const absl::StatusOr<MultiAcquireResult>& result,
                              std::string* out) {
  AppendResult(
      request_id, result, out, [&](const MultiAcquireResult& r, v1::LockResult& a) {
        return FillMultiAcquireResponse(signer, resources, r, a.mutable_acquire());
      });
}

void AppendRenewResult(uint64_t request_id, const TokenSigner* signer,
                       const std::string& resource, uint64_t token, int mode,
                       const absl::StatusOr<RenewResult>& result, std::string* out) {
  AppendResult(request_id, result, out, [&](const RenewResult& r, v1::LockResult& a) {
    FillRenewResponse(signer, resource, token, mode, r, a.mutable_renew());
  });
}

void AppendReleaseResult(uint64_t request_id, const absl::StatusOr<ReleaseResult>& result,
                         std::string* out) {
  AppendResult(request_id, result, out, [](const ReleaseResult& r, v1::LockResult& a) {
    FillReleaseResponse(r, a.mutable_release());
  });
}

void AppendDescribeResult(uint64_t request_id, const absl::StatusOr<ResourceInfo>& result,
                          std::string* out) {
  AppendResult(request_id, result, out, [](const ResourceInfo& r, v1::LockResult& a) {
    FillDescribeResponse(r, a.mutable_describe());
  });
}

void AppendProclaimResult(uint64_t request_id,
                          const absl::StatusOr<ProclaimResult>& result,
                          std::string* out) {
  AppendResult(request_id, result, out, [](const ProclaimResult& r, v1::LockResult& a) {
    a.mutable_proclaim()->set_seq(r.seq);
  });
}

void AppendLeaderResult(uint64_t request_id, const absl::StatusOr<ElectionChange>& result,
                        std::string* out) {
  AppendResult(request_id, result, out, [](const ElectionChange& r, v1::LockResult& a) {
    FillElectionChange(r, a.mutable_leader()->mutable_state());
  });
}

void AppendResignResult(uint64_t request_id, const absl::StatusOr<ReleaseResult>& result,
                        std::string* out) {
  AppendResult(request_id, result, out,
               [](const ReleaseResult&, v1::LockResult& a) { a.mutable_resign(); });
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
