// What one resource holds in the lock manager (lock_manager.h): its
// exclusive lease, its shared leases or permits, its wait queue and its
// lock-delay; and every question about them that needs no store, clock,
// timer or listener: which lease a token or a holder has, whether it is a
// semaphore, whether a kind of request fits it (the facts the grant rule
// of grant_rule.h decides by), what Describe and a refused Acquire say of
// it. LockManager changes it (grants, ends, queues) and keeps the indexes
// and rows that point into it in step.
//
// The parts that cost memory exist only while used: `shared` while the
// resource has shared leases or permits or is a semaphore with waiters
// (EnsureShared makes it, Trim drops it), `queue` while somebody waits
// (EnsureQueue, Trim). A resource the manager's table keeps is one with
// Empty() false once trimmed.
//
// Thread safety: none; LockManager::mu_ guards every ResourceState.
// References to leases and iterators to waiters stay valid until that
// lease ends or that waiter is unlinked (the shared leases are a vector:
// until the next shared lease is granted or ends).
#ifndef FENCEGATE_LOCKSERVICE_CORE_RESOURCE_STATE_H_
#define FENCEGATE_LOCKSERVICE_CORE_RESOURCE_STATE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "fencegate/lease_mode.h"
#include "lockservice/core/compact_time.h"
#include "lockservice/core/grant_rule.h"
#include "lockservice/core/lease_listeners.h"
#include "lockservice/core/lock_calls.h"
#include "lockservice/core/remembered_ids.h"
#include "lockservice/core/wait_queue.h"

namespace fencegate::lockservice {

// One lease of any kind, as held in memory.
struct HeldLease {
  std::string holder;
  uint64_t token = 0;
  // Times in 8 bytes, not absl's 16 (compact_time.h): a million leases.
  CompactDuration ttl;      // the longest TTL asked for: re-armed after restart
  CompactTime expiry;       // its key in the manager's expiry index, with the token
  CompactTime acquired_at;  // for max_hold
  uint32_t hold_count = 0;
  LeaseMode mode = LeaseMode::kExclusive;  // in hold_count's padding
  // Its first listener (lease_listeners.h); any more are in the registry.
  ListenerId first_listener = 0;
  // The last --remembered_request_ids (16) Acquire ids, in one block.
  RememberedIds request_ids;
};

// A resource's shared leases, or its permits when it is a semaphore
// (fencegate/lease_mode.h). Out of line: an exclusive lease pays one
// pointer for it.
struct SharedHolds {
  // 0: the shared leases of a read-write lock; N: a semaphore of N permits
  // (kept while the resource has holders or waiters, so N stays fixed).
  uint32_t permits = 0;
  // In grant order (so by token); a handful in the common case, at most
  // limits.max_holders_per_resource.
  std::vector<HeldLease> leases;
};

class ResourceState {
 public:
  // What the resource holds. LockManager changes these directly; the
  // members below read them and make or drop the optional parts.
  std::optional<HeldLease> lease;       // the exclusive lease
  std::unique_ptr<SharedHolds> shared;  // see the header: may be null
  std::unique_ptr<WaitQueue> queue;     // see the header: may be null
  CompactTime delay_until;              // InfinitePast: no lock-delay

  // ---- Leases
  // The lease with `token`, of any kind, or null.
  HeldLease* FindLease(uint64_t token);
  // The lease a request of `mode` by `holder` re-enters (the holder's own
  // lease of that kind), or null.
  HeldLease* ReentrantLease(const std::string& holder, LeaseMode mode);
  // The exclusive lease, else the oldest shared lease or permit; or null.
  const HeldLease* Oldest() const;
  // Shared leases or permits held.
  size_t SharedCount() const { return shared == nullptr ? 0 : shared->leases.size(); }
  // The shared holds, made if there are none.
  SharedHolds& EnsureShared();
  // Whether it is in use as a semaphore (permits held or waited for).
  bool IsSemaphore() const;
  // Whether its lock-delay still runs at `now`.
  bool Delayed(absl::Time now) const { return now < delay_until.get(); }

  // ---- Waiters
  // How many wait.
  size_t Waiting() const { return queue == nullptr ? 0 : queue->size(); }
  // The waiter parked with (holder, request_id), if any.
  std::optional<WaitQueue::iterator> FindParked(const std::string& holder,
                                                const std::string& request_id);
  // The queue, made if there is none.
  WaitQueue& EnsureQueue();

  // ---- Which requests fit (docs/design.md, "The lock manager")
  // INVALID_ARGUMENT, naming the field, when `args` asks for a kind this
  // resource is not used as at `now` (a semaphore, or a read-write lock;
  // or a semaphore of another size).
  absl::Status CheckKind(const AcquireArgs& args, absl::Time now) const;
  // What the grant rule needs to decide a request by `holder` at `now`.
  GrantFacts FactsFor(const std::string& holder, absl::Time now,
                      size_t max_holders) const;

  // ---- What it says of itself
  // What Describe and the status page say of it at `now`.
  ResourceInfo Info(absl::Time now) const;
  // Why an Acquire that was not granted at `now` was not, and when to retry.
  AcquireResult NotAcquired(absl::Time now) const;

  // ---- Lifetime in the manager's table
  // Drops an empty queue, and shared holds with no lease and no semaphore
  // size to keep (a semaphore keeps its size while anybody waits).
  void Trim();
  // Whether nothing is held, waited for or delayed at `now` (after Trim):
  // the manager forgets the resource then.
  bool Empty(absl::Time now) const {
    return !lease && shared == nullptr && queue == nullptr && !Delayed(now);
  }
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_RESOURCE_STATE_H_
