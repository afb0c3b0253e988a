// The plain structs LockManager's calls take and give (lock_manager.h):
// what an Acquire (of one resource or several; a Campaign), a Renew, a
// Release, a Proclaim and a Describe ask and answer, and the callback type they answer
// through. No gRPC types; lock_requests.h maps them to and from the protos.
//
// Thread safety: plain values.
#ifndef FENCEGATE_LOCKSERVICE_CORE_LOCK_CALLS_H_
#define FENCEGATE_LOCKSERVICE_CORE_LOCK_CALLS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fencegate/lease_mode.h"
#include "lockservice/core/lease_listener.h"

namespace fencegate::lockservice {

struct AcquireArgs {
  std::string resource;
  std::string holder;
  absl::Duration ttl;
  absl::Duration wait;     // zero: try-lock
  std::string request_id;  // optional
  // Optional: listens to the lease this call gets (docs/design.md, "The
  // lock manager": lease listeners). The call's callback must hold a
  // reference on it until it runs.
  LeaseListener* listener = nullptr;
  // The kind of lease asked for (fencegate/lease_mode.h); with kPermit, `permits` is
  // the semaphore's size (1..limits.max_holders_per_resource), 0 otherwise.
  LeaseMode mode = LeaseMode::kExclusive;
  uint32_t permits = 0;
  // Set: a Campaign (docs/semantics.md, "Elections"): the exclusive lease
  // granted leads the election `resource` with this value (its sequence
  // number 0). A holder that leads already gets its term back: no second
  // hold, the value unchanged.
  std::optional<std::string> campaign = std::nullopt;
};

enum class NotAcquiredReason { kNone, kHeld, kLockDelay };

struct AcquireResult {
  bool acquired = false;
  uint64_t token = 0;
  // When acquired: the kind of lease granted (the token's signature binds it).
  LeaseMode mode = LeaseMode::kExclusive;
  absl::Duration ttl;  // lease length granted (may be capped)
  uint32_t hold_count = 0;
  NotAcquiredReason reason = NotAcquiredReason::kNone;
  uint64_t holder_token = 0;  // when not acquired; 0: nobody holds it
  absl::Duration retry_after;
  // When acquired after waiting in line: from the call's arrival (or its
  // retry's, which took the place back) to its grant, on the manager's
  // clock. The lease's ttl counts from the grant, so its client counts it
  // from when it sent the call plus this (docs/semantics.md).
  absl::Duration waited;
};

struct RenewArgs {
  std::string resource;
  uint64_t token = 0;
  absl::Duration ttl;
  // The caller's authenticated identity (mutual TLS), or empty. When set,
  // the lease must belong to it (see HeldBy()).
  std::string caller;
  // Optional, as in AcquireArgs: listens to the lease once renewed.
  LeaseListener* listener = nullptr;
};

struct RenewResult {
  absl::Duration ttl;  // the lease now ends this long after the renew
};

struct ReleaseArgs {
  std::string resource;
  uint64_t token = 0;
  std::string request_id;  // optional
  std::string caller;      // as in RenewArgs
  // A Resign: ends the lease whatever its hold count.
  bool resign = false;
  // Optional: whose call this is. If it ends the lease, this listener is
  // not told (its answer says so); every other listener of the lease is.
  LeaseListener* listener = nullptr;
};

// An Acquire of several resources at once (a MultiLock): granted all
// together or not at all, each resource its own lease and token. The same
// holder, ttl, wait, request id, listener and kind (kExclusive or kShared)
// for every resource.
struct MultiAcquireArgs {
  std::vector<std::string> resources;  // 1..limits.max_multi_resources, distinct
  std::string holder;
  absl::Duration ttl;
  absl::Duration wait;
  std::string request_id;
  LeaseListener* listener = nullptr;
  LeaseMode mode = LeaseMode::kExclusive;
};

struct MultiAcquireResult {
  bool acquired = false;
  // When acquired: one per resource, in the order asked.
  std::vector<AcquireResult> leases;
  // When not: the first resource asked that could not be granted, and why
  // (its AcquireResult's reason, holder_token and retry_after).
  std::string busy_resource;
  AcquireResult busy;
  absl::Duration waited;  // when acquired: as AcquireResult::waited
};

struct ReleaseResult {
  uint32_t hold_count = 0;  // 0: the lease ended
};

// A Proclaim: the leader of election `resource` in term `token` (the
// exclusive lease's) says `value` from now on.
struct ProclaimArgs {
  std::string resource;
  uint64_t token = 0;
  std::string value;
  std::string caller;  // as in RenewArgs
};

struct ProclaimResult {
  uint64_t seq = 0;  // the value's sequence number within the term
};

struct ResourceInfo {
  bool held = false;
  // The exclusive lease; or, when shared leases or permits are held, the
  // oldest of them (the lowest token).
  std::string holder;
  uint64_t token = 0;
  absl::Duration remaining;
  uint32_t hold_count = 0;
  uint32_t waiters = 0;
  absl::Duration lock_delay_remaining;
  // How the resource is used now: kExclusive when free or exclusively held.
  LeaseMode mode = LeaseMode::kExclusive;
  uint32_t permits = 0;  // with kPermit: the semaphore's size
  uint32_t holders = 0;  // leases held: 1 exclusive, or shared leases or permits
};

// One resource as the status page lists it.
struct ResourceSummary {
  std::string resource;
  ResourceInfo info;
};

template <typename T>
using Callback = absl::AnyInvocable<void(absl::StatusOr<T>)>;

// `done`, for a parked Acquire (or AcquireMany) whose call waited `waited`:
// a grant it is told says so (AcquireResult::waited).
template <typename Result>
Callback<Result> TellingWaited(Callback<Result> done, absl::Duration waited) {
  return [done = std::move(done), waited](absl::StatusOr<Result> result) mutable {
    if (result.ok() && result->acquired) result->waited = waited;
    done(std::move(result));
  };
}

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_LOCK_CALLS_H_
