// The lock service's requests and replies between their protos
// (fencegate.v1, lock.proto) and LockManager's plain structs: all that
// LockServiceImpl does to a call apart from gRPC itself and the caller's
// certificate identity. No gRPC types, so the fuzz target
// (tests/fuzz/lock_service_fuzzer.cc) drives exactly the path a call takes.
//
// A call's path, the same for a unary call and a call on a Session stream:
// RejectUnknownFields (common/core/validation.h), then *ArgsFor (for Acquire
// CheckCanSign when signing; for Renew and Release CheckTokenSignature; then
// *ArgsFromProto and the caller's identity), the LockManager call, and
// Fill*Response with its result. Bad values (empty names, out-of-range TTLs,
// token 0, permits out of range or given with another mode) pass through
// unchanged: the manager refuses them with INVALID_ARGUMENT. Only what the
// manager's structs cannot hold is refused here: an Acquire `mode` that is
// no LeaseMode (proto3 keeps unknown enum numbers), INVALID_ARGUMENT naming
// `mode`.
//
// Thread safety: pure functions, except that they read `signer`
// (thread-safe).
#ifndef FENCEGATE_LOCKSERVICE_CORE_LOCK_REQUESTS_H_
#define FENCEGATE_LOCKSERVICE_CORE_LOCK_REQUESTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/core/token_signer.h"
#include "fencegate/lease_mode.h"
#include "fencegate/v1/lock.pb.h"
#include "lockservice/core/lock_limits.h"
#include "lockservice/core/lock_manager.h"

namespace fencegate::lockservice {

// Who makes a call, as the service established it from its connection.
struct Caller {
  bool mutual_tls = false;  // the server requires client certificates
  std::string subject;      // the certificate's subject under mutual TLS, else empty
};

// The manager's args for a call of `caller`, or the status the call fails
// with before it reaches the manager. Acquire: UNAVAILABLE when signing is
// on and no grant could be signed (a grant nobody can use would block the
// resource for its TTL); under mutual TLS the holder is the subject, plus
// "/" + the request's holder if given. Renew, Release: CheckTokenSignature,
// and the caller's subject for the manager's owner check.
absl::StatusOr<AcquireArgs> AcquireArgsFor(const fencegate::v1::AcquireRequest& request,
                                           const TokenSigner* signer,
                                           const Caller& caller);
absl::StatusOr<RenewArgs> RenewArgsFor(const fencegate::v1::RenewRequest& request,
                                       const TokenSigner* signer,
                                       const LockLimits& limits, const Caller& caller);
absl::StatusOr<ReleaseArgs> ReleaseArgsFor(const fencegate::v1::ReleaseRequest& request,
                                           const TokenSigner* signer,
                                           const LockLimits& limits,
                                           const Caller& caller);

// A multi-resource Acquire (request.resources set): its args, as
// AcquireArgsFor's; INVALID_ARGUMENT naming `resource` when `resource` is
// set too, or `permits` when it is not 0.
absl::StatusOr<MultiAcquireArgs> MultiAcquireArgsFor(
    const fencegate::v1::AcquireRequest& request, const TokenSigner* signer,
    const Caller& caller);
// Fills `response` from a multi-resource Acquire: each lease signed as
// FillAcquireResponse signs one; `resources` are the request's, in order.
absl::Status FillMultiAcquireResponse(const TokenSigner* signer,
                                      const std::vector<std::string>& resources,
                                      const MultiAcquireResult& result,
                                      fencegate::v1::AcquireResponse* response);

// The request's fields alone: the holder is the request's. INVALID_ARGUMENT
// naming `mode` if the request's mode is no LeaseMode.
absl::StatusOr<AcquireArgs> AcquireArgsFromProto(
    const fencegate::v1::AcquireRequest& request);
RenewArgs RenewArgsFromProto(const fencegate::v1::RenewRequest& request);
ReleaseArgs ReleaseArgsFromProto(const fencegate::v1::ReleaseRequest& request);

// With signing on (`signer` not null), the signature of a Renew or Release
// must be valid for its resource, token and `mode` (the request's
// fencegate.v1.LeaseMode, the lease's as it claims): PERMISSION_DENIED
// otherwise. A mode this server does not know is INVALID_ARGUMENT naming
// `mode`, signing on or off. Requests whose resource or token are
// malformed pass, for the manager to refuse with INVALID_ARGUMENT. OK when
// `signer` is null.
absl::Status CheckTokenSignature(const TokenSigner* signer, const LockLimits& limits,
                                 const std::string& resource, uint64_t token, int mode,
                                 const fencegate::v1::TokenSignature& signature);

// Fills `response` from a granted or refused Acquire; a grant is signed,
// for its resource, token and mode (result.mode), when `signer` is set. UNAVAILABLE if
// the grant cannot be signed (the grant stands, committed, and expires unless renewed).
absl::Status FillAcquireResponse(const TokenSigner* signer, const std::string& resource,
                                 const AcquireResult& result,
                                 fencegate::v1::AcquireResponse* response);
// A renewed lease is re-signed under the current key when `signer` is set,
// so leases follow a key rotation; `mode` is the request's (checked by
// RenewArgsFor).
void FillRenewResponse(const TokenSigner* signer, const std::string& resource,
                       uint64_t token, int mode, const RenewResult& result,
                       fencegate::v1::RenewResponse* response);
void FillReleaseResponse(const ReleaseResult& result,
                         fencegate::v1::ReleaseResponse* response);
void FillDescribeResponse(const ResourceInfo& info,
                          fencegate::v1::DescribeResponse* response);

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_LOCK_REQUESTS_H_
