#include "lockservice/core/lock_requests.h"

#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/base/errors.h"
#include "common/core/validation.h"
#include "fencegate/lease_mode.h"

namespace fencegate::lockservice {
namespace {

namespace v1 = ::fencegate::v1;

int64_t Ms(absl::Duration d) { return absl::ToInt64Milliseconds(d); }

v1::AcquireResponse::NotAcquiredReason ToProto(NotAcquiredReason reason) {
  switch (reason) {
    case NotAcquiredReason::kHeld:
      return v1::AcquireResponse::HELD;
    case NotAcquiredReason::kLockDelay:
      return v1::AcquireResponse::LOCK_DELAY;
    case NotAcquiredReason::kNone:
      break;
  }
  return v1::AcquireResponse::REASON_UNSPECIFIED;
}

// The request's mode; INVALID_ARGUMENT naming `mode` for a number that is no
// LeaseMode (a newer client's, or garbage: proto3 keeps it as it came).
absl::StatusOr<LeaseMode> FromProto(int mode) {
  const std::optional<LeaseMode> known = LeaseModeFromNumber(mode);
  if (known.has_value()) return *known;
  return InvalidFieldError(
      "mode", absl::StrCat("mode is ", mode,
                           ", which is no lease mode; use LEASE_MODE_EXCLUSIVE (0), "
                           "LEASE_MODE_SHARED (1) or LEASE_MODE_PERMIT (2)"));
}

static_assert(static_cast<int>(LeaseMode::kExclusive) == v1::LEASE_MODE_EXCLUSIVE &&
                  static_cast<int>(LeaseMode::kShared) == v1::LEASE_MODE_SHARED &&
                  static_cast<int>(LeaseMode::kPermit) == v1::LEASE_MODE_PERMIT,
              "LeaseMode has the wire's values (fencegate/lease_mode.h)");

v1::LeaseMode ToProto(LeaseMode mode) { return static_cast<v1::LeaseMode>(mode); }

void SetSignature(const TokenSignature& signature, v1::TokenSignature* out) {
  out->set_key_id(signature.key_id);
  out->set_mac(signature.mac);
}

// `args` of a Renew or Release once its signature is checked, with the
// caller's subject for the manager's owner check.
template <typename Args>
absl::StatusOr<Args> Authorized(Args args, int mode, const v1::TokenSignature& signature,
                                const TokenSigner* signer, const LockLimits& limits,
                                const Caller& caller) {
  absl::Status verified =
      CheckTokenSignature(signer, limits, args.resource, args.token, mode, signature);
  if (!verified.ok()) return verified;
  args.caller = caller.subject;
  return args;
}

}  // namespace

absl::StatusOr<AcquireArgs> AcquireArgsFromProto(const v1::AcquireRequest& request) {
  absl::StatusOr<LeaseMode> mode = FromProto(request.mode());
  if (!mode.ok()) return mode.status();
  AcquireArgs args;
  args.resource = request.resource();
  args.holder = request.holder();
  args.ttl = absl::Milliseconds(request.ttl_ms());
  args.wait = absl::Milliseconds(request.wait_ms());
  args.request_id = request.request_id();
  args.mode = *mode;
  args.permits = request.permits();  // its range is the manager's to check
  return args;
}

RenewArgs RenewArgsFromProto(const v1::RenewRequest& request) {
  RenewArgs args;
  args.resource = request.resource();
  args.token = request.token();
  args.ttl = absl::Milliseconds(request.ttl_ms());
  return args;
}

ReleaseArgs ReleaseArgsFromProto(const v1::ReleaseRequest& request) {
  ReleaseArgs args;
  args.resource = request.resource();
  args.token = request.token();
  args.request_id = request.request_id();
  return args;
}

absl::StatusOr<AcquireArgs> AcquireArgsFor(const v1::AcquireRequest& request,
                                           const TokenSigner* signer,
                                           const Caller& caller) {
  if (signer != nullptr) {
    if (absl::Status s = signer->CheckCanSign(); !s.ok()) {
      return absl::UnavailableError(
          absl::StrCat("the lock service cannot sign grants: ", s.message()));
    }
  }
  absl::StatusOr<AcquireArgs> args = AcquireArgsFromProto(request);
  if (!args.ok()) return args.status();
  if (caller.mutual_tls) {
    // The identity is the certificate's; the request only tells apart
    // processes that share a certificate.
    args->holder = args->holder.empty() ? caller.subject
                                        : absl::StrCat(caller.subject, "/", args->holder);
  }
  return args;
}

absl::StatusOr<MultiAcquireArgs> MultiAcquireArgsFor(const v1::AcquireRequest& request,
                                                     const TokenSigner* signer,
                                                     const Caller& caller) {
  if (!request.resource().empty()) {
    return InvalidFieldError(
        "resource",
        "resource: set either resource or resources (several at once), not "
        "both");
  }
  if (request.permits() != 0) {
    return InvalidFieldError(
        "permits", absl::StrCat("permits: an Acquire of several resources takes no "
                                "permits (send 0), not ",
                                request.permits()));
  }
  // The fields they share, checked and mapped as for one resource.
  v1::AcquireRequest one = request;
  one.clear_resources();
  absl::StatusOr<AcquireArgs> shared = AcquireArgsFor(one, signer, caller);
  if (!shared.ok()) return shared.status();
  MultiAcquireArgs args;
  args.resources.assign(request.resources().begin(), request.resources().end());
  args.holder = std::move(shared->holder);
  args.ttl = shared->ttl;
  args.wait = shared->wait;
  args.request_id = std::move(shared->request_id);
  args.mode = shared->mode;
  return args;
}

absl::Status FillMultiAcquireResponse(const TokenSigner* signer,
                                      const std::vector<std::string>& resources,
                                      const MultiAcquireResult& result,
                                      v1::AcquireResponse* response) {
  response->set_acquired(result.acquired);
  if (!result.acquired) {
    response->set_busy_resource(result.busy_resource);
    response->set_reason(ToProto(result.busy.reason));
    response->set_holder_token(result.busy.holder_token);
    response->set_retry_after_ms(Ms(result.busy.retry_after));
    return absl::OkStatus();
  }
  for (size_t i = 0; i < result.leases.size() && i < resources.size(); ++i) {
    const AcquireResult& lease = result.leases[i];
    v1::AcquireResponse one;
    absl::Status filled = FillAcquireResponse(signer, resources[i], lease, &one);
    if (!filled.ok()) return filled;
    v1::GrantedLease* granted = response->add_leases();
    granted->set_resource(resources[i]);
    granted->set_token(one.token());
    granted->set_ttl_ms(one.ttl_ms());
    granted->set_hold_count(one.hold_count());
    *granted->mutable_signature() = one.signature();
    response->set_mode(one.mode());
  }
  response->set_waited_ms(Ms(result.waited));
  return absl::OkStatus();
}

absl::StatusOr<RenewArgs> RenewArgsFor(const v1::RenewRequest& request,
                                       const TokenSigner* signer,
                                       const LockLimits& limits, const Caller& caller) {
  return Authorized(RenewArgsFromProto(request), request.mode(), request.signature(),
                    signer, limits, caller);
}

absl::StatusOr<ReleaseArgs> ReleaseArgsFor(const v1::ReleaseRequest& request,
                                           const TokenSigner* signer,
                                           const LockLimits& limits,
                                           const Caller& caller) {
  return Authorized(ReleaseArgsFromProto(request), request.mode(), request.signature(),
                    signer, limits, caller);
}

absl::Status CheckTokenSignature(const TokenSigner* signer, const LockLimits& limits,
                                 const std::string& resource, uint64_t token, int mode,
                                 const v1::TokenSignature& signature) {
  const std::optional<LeaseMode> lease_mode = LeaseModeFromNumber(mode);
  if (!lease_mode.has_value()) {
    return InvalidFieldError(
        "mode", absl::StrCat("mode is ", mode,
                             "; send the mode the lease was acquired with: 0 "
                             "(EXCLUSIVE), 1 (SHARED) or 2 (PERMIT)"));
  }
  if (signer == nullptr) return absl::OkStatus();
  // Bad input is the manager's to refuse, with INVALID_ARGUMENT.
  if (token == 0 || !ValidateName("resource", resource, limits.max_resource_bytes).ok()) {
    return absl::OkStatus();
  }
  return signer->Verify(resource, token, *lease_mode, signature.key_id(),
                        signature.mac());
}

absl::Status FillAcquireResponse(const TokenSigner* signer, const std::string& resource,
                                 const AcquireResult& result,
                                 v1::AcquireResponse* response) {
  if (result.acquired && signer != nullptr) {
    absl::StatusOr<TokenSignature> signature =
        signer->Sign(resource, result.token, result.mode);
    if (!signature.ok()) {
      return absl::UnavailableError(
          absl::StrCat("cannot sign the grant: ", signature.status().message()));
    }
    SetSignature(*signature, response->mutable_signature());
  }
  response->set_acquired(result.acquired);
  response->set_token(result.token);
  if (result.acquired) response->set_mode(ToProto(result.mode));
  response->set_ttl_ms(Ms(result.ttl));
  response->set_hold_count(result.hold_count);
  response->set_reason(ToProto(result.reason));
  response->set_holder_token(result.holder_token);
  response->set_retry_after_ms(Ms(result.retry_after));
  response->set_waited_ms(Ms(result.waited));
  return absl::OkStatus();
}

void FillRenewResponse(const TokenSigner* signer, const std::string& resource,
                       uint64_t token, int mode, const RenewResult& result,
                       v1::RenewResponse* response) {
  response->set_ttl_ms(Ms(result.ttl));
  if (signer == nullptr) return;
  // The request's mode passed CheckTokenSignature, so it is the lease's.
  absl::StatusOr<TokenSignature> signature = signer->Sign(
      resource, token, LeaseModeFromNumber(mode).value_or(LeaseMode::kExclusive));
  if (signature.ok()) SetSignature(*signature, response->mutable_signature());
}

void FillReleaseResponse(const ReleaseResult& result, v1::ReleaseResponse* response) {
  response->set_hold_count(result.hold_count);
}

void FillDescribeResponse(const ResourceInfo& info, v1::DescribeResponse* response) {
  response->set_held(info.held);
  response->set_holder(info.holder);
  response->set_token(info.token);
  response->set_remaining_ms(Ms(info.remaining));
  response->set_hold_count(info.hold_count);
  response->set_waiters(info.waiters);
  response->set_lock_delay_remaining_ms(Ms(info.lock_delay_remaining));
  response->set_mode(ToProto(info.mode));
  response->set_permits(info.permits);
  response->set_holders(info.holders);
}

}  // namespace fencegate::lockservice
