// The lock service's Session stream messages (lock.proto:
// LockSessionRequest in, LockSessionResponse out) between bytes and what the
// session (lock_session.h) works with. No gRPC types, so the fuzz target
// parses and encodes exactly what the server does. Parsing, and appending
// answers (LockSessionResponse.results) and pushes (.lost) one by one,
// follow common/core/stream_wire.h.
//
// Thread safety: pure functions, except that they read `signer`
// (thread-safe).
#ifndef FENCEGATE_LOCKSERVICE_CORE_LOCK_SESSION_WIRE_H_
#define FENCEGATE_LOCKSERVICE_CORE_LOCK_SESSION_WIRE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/core/stream_wire.h"
#include "common/core/token_signer.h"
#include "fencegate/v1/lock.pb.h"
#include "lockservice/core/lease_listener.h"
#include "lockservice/core/lock_manager.h"

namespace fencegate::lockservice {

using LockIncomingCall = ::fencegate::IncomingCall<fencegate::v1::LockCall>;
using LockIncomingMessage =
    ::fencegate::IncomingMessage<fencegate::v1::LockSessionRequest,
                                 fencegate::v1::LockCall>;

// Each appends the answer to one call to `out`: the response the unary
// call would return (filled by lock_requests.h), or its status.
// A grant is signed when `signer` is set (UNAVAILABLE if it cannot be).
void AppendAcquireResult(uint64_t request_id, const TokenSigner* signer,
                         const std::string& resource,
                         const absl::StatusOr<AcquireResult>& result, std::string* out);
// A multi-resource Acquire's (FillMultiAcquireResponse).
void AppendMultiAcquireResult(uint64_t request_id, const TokenSigner* signer,
                              const std::vector<std::string>& resources,
                              const absl::StatusOr<MultiAcquireResult>& result,
                              std::string* out);
void AppendRenewResult(uint64_t request_id, const TokenSigner* signer,
                       const std::string& resource, uint64_t token, int mode,
                       const absl::StatusOr<RenewResult>& result, std::string* out);
void AppendReleaseResult(uint64_t request_id, const absl::StatusOr<ReleaseResult>& result,
                         std::string* out);
void AppendDescribeResult(uint64_t request_id, const absl::StatusOr<ResourceInfo>& result,
                          std::string* out);
// The election calls' (a Campaign's is AppendAcquireResult's).
void AppendProclaimResult(uint64_t request_id,
                          const absl::StatusOr<ProclaimResult>& result, std::string* out);
void AppendLeaderResult(uint64_t request_id, const absl::StatusOr<ElectionChange>& result,
                        std::string* out);
void AppendResignResult(uint64_t request_id, const absl::StatusOr<ReleaseResult>& result,
                        std::string* out);
// An answer that is the status alone. REQUIRES: !status.ok().
void AppendLockError(uint64_t request_id, const absl::Status& status, std::string* out);

// Appends a pushed LeaseLost to `out`.
void AppendLeaseLost(const LeaseLoss& loss, std::string* out);

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_LOCK_SESSION_WIRE_H_
