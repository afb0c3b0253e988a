// What a valid call to the lock manager is (lock_call_validation.h).
#include "lockservice/core/lock_call_validation.h"

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/base/errors.h"
#include "common/core/validation.h"
#include "fencegate/lease_mode.h"

namespace fencegate::lockservice {

absl::Status ValidateAcquire(const AcquireArgs& args, const LockLimits& limits) {
  absl::Status s = ValidateName("resource", args.resource, limits.max_resource_bytes);
  if (s.ok()) s = ValidateName("holder", args.holder, limits.max_holder_bytes);
  if (s.ok()) s = ValidateDuration("ttl_ms", args.ttl, limits.min_ttl, limits.max_ttl);
  if (s.ok()) {
    s = ValidateDuration("wait_ms", args.wait, absl::ZeroDuration(), limits.max_wait);
  }
  if (s.ok()) {
    s = ValidateOptionalName("request_id", args.request_id, limits.max_request_id_bytes);
  }
  if (!s.ok()) return s;
  if (args.mode == LeaseMode::kPermit) {
    if (args.permits < 1 || args.permits > limits.max_holders_per_resource) {
      return InvalidFieldError(
          "permits",
          absl::StrCat("permits: a semaphore has 1 to ", limits.max_holders_per_resource,
                       " permits (--max_holders_per_resource), not ", args.permits));
    }
  } else if (args.permits != 0) {
    return InvalidFieldError(
        "permits", absl::StrCat("permits: only a PERMIT Acquire names a number of "
                                "permits; this one asks for a ",
                                LeaseModeName(args.mode),
                                " lease with permits = ", args.permits, " (send 0)"));
  }
  if (args.campaign) {
    if (args.mode != LeaseMode::kExclusive) {
      return InvalidFieldError(
          "mode", absl::StrCat("mode: a campaign leads with an EXCLUSIVE lease, not a ",
                               LeaseModeName(args.mode), " one"));
    }
    return ValidateElectionValue(*args.campaign, limits);
  }
  return absl::OkStatus();
}

absl::Status ValidateElectionValue(absl::string_view value, const LockLimits& limits) {
  if (value.size() <= limits.max_election_value_bytes) return absl::OkStatus();
  return InvalidFieldError("value", absl::StrCat("value: a leader's value is at most ",
                                                 limits.max_election_value_bytes,
                                                 " bytes, not ", value.size()));
}

absl::Status ValidateProclaim(const ProclaimArgs& args, const LockLimits& limits) {
  absl::Status s = ValidateName("election", args.resource, limits.max_resource_bytes);
  if (s.ok()) s = ValidateToken("term", args.token);
  if (s.ok()) s = ValidateElectionValue(args.value, limits);
  return s;
}

absl::Status ValidateAcquireMany(const MultiAcquireArgs& args, const LockLimits& limits,
                                 size_t most) {
  if (args.resources.empty() || args.resources.size() > most) {
    return InvalidFieldError(
        "resources",
        absl::StrCat("resources: an Acquire names 1 to ", most,
                     " resources (--max_multi_resources), not ", args.resources.size()));
  }
  if (args.mode == LeaseMode::kPermit) {
    return InvalidFieldError(
        "mode",
        "mode: an Acquire of several resources takes EXCLUSIVE or SHARED leases, not "
        "permits");
  }
  AcquireArgs one{args.resources[0], args.holder, args.ttl, args.wait, args.request_id};
  one.mode = args.mode;
  if (absl::Status s = ValidateAcquire(one, limits); !s.ok()) return s;
  absl::flat_hash_set<absl::string_view> seen;
  for (const std::string& name : args.resources) {
    absl::Status s = ValidateName("resources", name, limits.max_resource_bytes);
    if (!s.ok()) return s;
    if (!seen.insert(name).second) {
      return InvalidFieldError("resources",
                               absl::StrCat("resources: '", name,
                                            "' is named twice; name each resource once"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateRenew(const RenewArgs& args, const LockLimits& limits) {
  absl::Status s = ValidateName("resource", args.resource, limits.max_resource_bytes);
  if (s.ok()) s = ValidateToken("token", args.token);
  if (s.ok()) s = ValidateDuration("ttl_ms", args.ttl, limits.min_ttl, limits.max_ttl);
  return s;
}

absl::Status ValidateRelease(const ReleaseArgs& args, const LockLimits& limits) {
  absl::Status s = ValidateName("resource", args.resource, limits.max_resource_bytes);
  if (s.ok()) s = ValidateToken("token", args.token);
  if (s.ok()) {
    s = ValidateOptionalName("request_id", args.request_id, limits.max_request_id_bytes);
  }
  return s;
}

absl::Status CheckBacklog(size_t pending, const LockLimits& limits) {
  if (pending < limits.max_pending) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "the lock service has ", pending,
      " decided calls waiting for its store, its limit (--max_pending); nothing was "
      "applied; retry with backoff"));
}

}  // namespace fencegate::lockservice
