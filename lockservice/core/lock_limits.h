// LockLimits: the lock service's bounds and policies, each settable by a flag
// of fencegate-lockservice (same name). Defaults are documented here and in
// docs/semantics.md.
#ifndef FENCEGATE_LOCKSERVICE_CORE_LOCK_LIMITS_H_
#define FENCEGATE_LOCKSERVICE_CORE_LOCK_LIMITS_H_

#include <cstddef>

#include "absl/time/time.h"

namespace fencegate::lockservice {

struct LockLimits {
  absl::Duration min_ttl = absl::Milliseconds(100);
  absl::Duration max_ttl = absl::Hours(1);
  absl::Duration max_wait = absl::Minutes(5);
  size_t max_resource_bytes = 256;
  size_t max_holder_bytes = 256;
  size_t max_request_id_bytes = 128;
  // An election leader's value (Campaign, Proclaim).
  size_t max_election_value_bytes = 4096;
  // Parked Acquire calls per resource and in all; past them Acquire answers
  // RESOURCE_EXHAUSTED.
  size_t max_waiters_per_resource = 10000;
  size_t max_waiters_total = 100000;
  // Shared leases held on one resource at once, and the most permits a
  // semaphore may have; past it a shared Acquire waits (or is refused on a
  // try-lock) and a larger semaphore is INVALID_ARGUMENT.
  size_t max_holders_per_resource = 10000;
  // Resources one Acquire may name at once (a MultiLock); at most
  // LockManager::kMaxMultiResources (8).
  size_t max_multi_resources = 8;
  // Resources with a lease, a waiter or a lock-delay; past it a new resource
  // gets RESOURCE_EXHAUSTED.
  size_t max_resources = 1000000;
  // After a lease EXPIRES (not when released), the resource is not granted
  // again for this long (Chubby/Consul "lock-delay"). 0 = off.
  absl::Duration lock_delay = absl::ZeroDuration();
  // Cap on a lease's total life across renewals; renewals past it are
  // shortened to end at the cap. 0 = no cap.
  absl::Duration max_hold = absl::ZeroDuration();
  // After a restart or a failover, how long a persisted waiter keeps its
  // place (blocking its queue from its head) for its client to retry.
  absl::Duration waiter_reattach_grace = absl::Seconds(5);
  // Request ids remembered per lease for retry dedupe.
  size_t remembered_request_ids = 16;
  // Most requests one group commit takes.
  size_t max_batch = 4096;
  // Decisions (an Acquire, Renew or Release each; an expiry) waiting for
  // the store behind the commit under way; past it Acquire, Renew, Release
  // and Describe answer RESOURCE_EXHAUSTED, deciding nothing, so a slow
  // disk or etcd cannot make the queue outgrow memory.
  size_t max_pending = 100000;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_LOCK_LIMITS_H_
